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

/// An open demuxer. Owned by the caller, released with idm_input_close.
typedef struct idm_input idm_input;

typedef struct idm_stream_info {
    int index;
    int media_type;        // AVMEDIA_TYPE_*
    int is_timed_id3;
    int frame_rate_num;    // 0 when unknown
    int frame_rate_den;
} idm_stream_info;

typedef struct idm_packet {
    const uint8_t *data;   // owned by the input, valid until the next read or close
    int size;
    int64_t pts;           // IDM_NO_PTS when absent; in 90 kHz ticks for MPEG-TS
    int64_t dts;
    int stream_index;
    int time_base_num;
    int time_base_den;
    int64_t position;      // byte offset of the packet's start in the file; -1 when unknown or in a prefix
} idm_packet;

#define IDM_NO_PTS INT64_MIN

/// Opens anything libavformat reads: a path or a URL (file, http, https, udp, srt).
/// `format_name` may be NULL to let libavformat probe (naming it skips the probe).
/// `probe_stream_info` runs avformat_find_stream_info (needed for frame rates only).
int idm_input_open_url(idm_input **out, const char *url, const char *format_name, idm_interrupt *interrupt,
                       int64_t io_timeout_us, int probe_stream_info);

/// Opens bytes already in memory (one HLS segment). The bytes are copied.
/// `format_name` may be NULL to let libavformat probe.
int idm_input_open_memory(idm_input **out, const uint8_t *bytes, size_t size,
                          const char *format_name, idm_interrupt *interrupt,
                          int probe_stream_info);

/// Opens `length` bytes of the file at `path` from `offset`, demuxed after `prefix` (the
/// file's opening bytes, so the PAT and PMT are known before the range starts). Packet
/// positions are file offsets. Lets one large file be demuxed in parallel ranges.
int idm_input_open_file_range(idm_input **out, const char *path, int64_t offset, int64_t length,
                              const uint8_t *prefix, size_t prefix_size, const char *format_name,
                              idm_interrupt *interrupt);

void idm_input_close(idm_input **input);

/// Bytes of the input consumed so far.
int64_t idm_input_position(const idm_input *input);

int idm_input_stream_count(const idm_input *input);
idm_stream_info idm_input_stream_info(const idm_input *input, int index);

/// Reads the next timed-ID3 packet; packets of every other stream are
/// discarded so libavformat never assembles them. Returns 0, AVERROR_EOF at
/// the end, or another AVERROR.
int idm_input_read_timed_id3(idm_input *input, idm_packet *packet);

/// Reads a whole resource (playlist, segment, key) through libavformat's I/O.
/// On success *bytes is owned by the caller and released with idm_free.
int idm_fetch(const char *url, idm_interrupt *interrupt, int64_t io_timeout_us,
              uint8_t **bytes, size_t *size);
void idm_free(void *pointer);

/// Routes libav log lines (already formatted) to `handler` for levels up to `max_level`.
typedef void (*idm_log_handler)(int level, const char *line);
void idm_set_log_handler(idm_log_handler handler, int max_level);

int idm_error_eof(void);
int idm_error_exit(void);
void idm_error_string(int error, char *buffer, size_t size);

/// AES-128-CBC in place (HLS EXT-X-KEY METHOD=AES-128); `size` must be a multiple of 16.
/// `iv` is updated as CBC chains, so consecutive calls continue one stream.
int idm_aes128_cbc(uint8_t *data, size_t size, const uint8_t key[16], uint8_t iv[16], int decrypt);

#endif
