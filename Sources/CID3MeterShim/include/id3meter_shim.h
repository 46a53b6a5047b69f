// A thin, boring layer over libavformat: plain C types across the boundary,
// every error an AVERROR code. No parsing logic lives here.
#ifndef ID3METER_SHIM_H
#define ID3METER_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// Cancellation of blocking libavformat I/O, polled by libavformat's interrupt callback.
/// Owned by the caller.
typedef struct idm_interrupt idm_interrupt;

idm_interrupt *idm_interrupt_new(void);
void idm_interrupt_free(idm_interrupt *interrupt);
void idm_interrupt_cancel(idm_interrupt *interrupt);
int idm_interrupt_is_cancelled(const idm_interrupt *interrupt);

/// Streams libavformat found in bytes probed from memory. Owned by the caller, released
/// with idm_input_close.
typedef struct idm_input idm_input;

typedef struct idm_stream_info {
    int index;
    int media_type;        // AVMEDIA_TYPE_*
    int is_timed_id3;
    int frame_rate_num;    // 0 when unknown
    int frame_rate_den;
} idm_stream_info;

/// Opens bytes in memory (copied) and runs avformat_find_stream_info on them, for the
/// streams and their frame rates. `format_name` may be NULL to let libavformat probe.
int idm_input_probe_memory(idm_input **out, const uint8_t *bytes, size_t size,
                           const char *format_name, idm_interrupt *interrupt);
void idm_input_close(idm_input **input);
int idm_input_stream_count(const idm_input *input);
idm_stream_info idm_input_stream_info(const idm_input *input, int index);

/// A byte stream through libavformat's I/O layer: any protocol it speaks (file, http,
/// https, udp, srt, ...). Owned by the caller, released with idm_stream_close, also when
/// opening failed.
typedef struct idm_stream idm_stream;

/// `protocols` is libavformat's protocol_whitelist (comma-separated): nothing else is opened,
/// nested protocols and redirects included. `io_timeout_us` ends a silent read; `deadline_us`
/// (0: none) ends everything, opening included, that long after this call. `offset` and `end`
/// (0: none) ask for a sub-range: a Range header over http(s), a seek otherwise; the caller
/// stops reading at its end.
int idm_stream_open(idm_stream **out, const char *url, const char *protocols, idm_interrupt *interrupt,
                    int64_t io_timeout_us, int64_t deadline_us, int64_t offset, int64_t end);
/// Whether the stream was interrupted because its deadline passed.
int idm_stream_deadline_passed(const idm_stream *stream);
/// Up to `size` bytes, returning as soon as some are available; AVERROR_EOF at the end.
int idm_stream_read(idm_stream *stream, uint8_t *buffer, int size);
/// As idm_stream_read, waiting at most `wait_us` for the first byte: AVERROR(EAGAIN) when none
/// came by then, the stream still open and readable again.
int idm_stream_read_within(idm_stream *stream, uint8_t *buffer, int size, int64_t wait_us);
/// The total size when the protocol knows it, else a negative AVERROR.
int64_t idm_stream_size(idm_stream *stream);
void idm_stream_close(idm_stream **stream);

/// Routes libav log lines (already formatted) to `handler` for levels up to `max_level`.
typedef void (*idm_log_handler)(int level, const char *line);
void idm_set_log_handler(idm_log_handler handler, int max_level);
/// Copies (and forgets) the last error line libav logged on the calling thread; 0 when there is
/// none. With a NULL buffer it only forgets it.
int idm_take_last_error(char *buffer, size_t size);

int idm_error_eof(void);
int idm_error_exit(void);
void idm_error_string(int error, char *buffer, size_t size);

/// AES-128-CBC in place (HLS EXT-X-KEY METHOD=AES-128); `size` must be a multiple of 16.
/// `iv` is updated as CBC chains, so consecutive calls continue one stream.
int idm_aes128_cbc(uint8_t *data, size_t size, const uint8_t key[16], uint8_t iv[16], int decrypt);

/// Keeps blocks of a megabyte and more in their own mappings, returned to the system when freed
/// (glibc otherwise raises the threshold to the largest block freed, and per-thread heaps keep
/// the megabytes of each reloaded playlist). Called once, at the start of the process.
void idm_keep_large_blocks_mapped(void);

/// Returns the allocator's free pages to the system (malloc_trim): after a line-up let go of
/// many channels, their memory would otherwise stay with the process.
void idm_release_free_memory(void);

/// Starts this program again, same process, with glibc's per-thread caches of freed blocks turned
/// off (GLIBC_TUNABLES, which glibc reads only at start). Those caches are blocks malloc_trim
/// cannot see: after a line-up let go of thousands of channels, the idle threads' caches pin
/// some 5 MB of pages for good. Returns only when it did not restart: 0 when GLIBC_TUNABLES
/// already sets tcache_count (the operator's choice, or the restarted process), else -errno.
int idm_restart_without_thread_caches(char *const argv[]);

/// A gzip or zlib ("deflate") decoder for HTTP bodies sent with a Content-Encoding. Owned by
/// the caller, released with idm_inflater_free; NULL when out of memory.
typedef struct idm_inflater idm_inflater;

idm_inflater *idm_inflater_new(void);
/// Decodes from `input`, writing at most `output_size` bytes: `consumed` and `produced` say how
/// much of each. 0: call again (with the rest of the input, or more room); 1: a gzip member or
/// zlib stream ended (what follows starts a new one); -1: not a valid stream.
int idm_inflater_run(idm_inflater *inflater, const uint8_t *input, size_t input_size, size_t *consumed,
                     uint8_t *output, size_t output_size, size_t *produced);
void idm_inflater_free(idm_inflater *inflater);

#endif
