#include "id3meter_shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavformat/avformat.h>
#include <libavutil/aes.h>
#include <libavutil/time.h>

// MARK: - Loading libav

// libav is opened on first use, not linked: files and HTTP never need it, and mapping
// libavcodec's 149 libraries took 40 ms of every start, --help and --version included. The
// functions are called through these pointers, typed from the headers built against.
#define IDM_LIBAV_FUNCTIONS(X) \
    X(av_aes_alloc) X(av_aes_crypt) X(av_aes_init) X(av_dict_free) X(av_dict_set) X(av_dict_set_int) \
    X(av_find_input_format) X(av_free) X(av_freep) X(av_gettime_relative) \
    X(av_log_format_line2) X(av_log_get_level) X(av_log_set_callback) X(av_log_set_level) X(av_malloc) \
    X(av_mallocz) X(av_strerror) X(avformat_alloc_context) X(avformat_close_input) \
    X(avformat_find_stream_info) X(avformat_open_input) X(avio_alloc_context) X(avio_closep) \
    X(avio_context_free) X(avio_open2) X(avio_read_partial) X(avio_seek) X(avio_size)

static struct {
#define IDM_POINTER(name) __typeof__(&name) name;
    IDM_LIBAV_FUNCTIONS(IDM_POINTER)
} idm_av;
#define AV(name) (*idm_av.name)

#define IDM_STRING(x) #x
#define IDM_SONAME(library, major) "lib" library ".so." IDM_STRING(major)
static const char *const idm_libavformat = IDM_SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR);

static pthread_once_t idm_av_once = PTHREAD_ONCE_INIT;
static char idm_av_failure[320];  // why libav could not be loaded
static int idm_av_usable;
static idm_log_handler idm_current_log_handler;
// Until a handler is set, libav prints nothing (a library must not write to its host's stderr);
// its error lines are still kept for the errors reported in their place.
static int idm_log_level = AV_LOG_ERROR;
static __thread char idm_last_error_line[512];
static void idm_apply_log_handler(void);

static void idm_av_load(void) {
    // libavformat's own dependencies (libavcodec, libavutil...) come with it; dlsym looks there too.
    void *library = dlopen(idm_libavformat, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(idm_av_failure, sizeof idm_av_failure, "cannot load %s: %s", idm_libavformat, dlerror());
        return;
    }
#define IDM_BIND(name) \
    if (!idm_av_failure[0] && !(idm_av.name = (__typeof__(&name))dlsym(library, #name))) \
        snprintf(idm_av_failure, sizeof idm_av_failure, "%s has no %s", idm_libavformat, #name);
    IDM_LIBAV_FUNCTIONS(IDM_BIND)
    if (idm_av_failure[0]) return;
    __atomic_store_n(&idm_av_usable, 1, __ATOMIC_RELEASE);
    idm_apply_log_handler();
}

// 0 once libav is usable; else an error whose reason `idm_take_last_error` gives.
static int idm_av_ready(void) {
    pthread_once(&idm_av_once, idm_av_load);
    if (!idm_av_failure[0]) return 0;
    snprintf(idm_last_error_line, sizeof idm_last_error_line, "%s", idm_av_failure);
    return AVERROR(ENOSYS);
}

// MARK: - Interrupts

struct idm_interrupt {
    int cancelled;
};

idm_interrupt *idm_interrupt_new(void) { return calloc(1, sizeof(idm_interrupt)); }

void idm_interrupt_free(idm_interrupt *interrupt) { free(interrupt); }

void idm_interrupt_cancel(idm_interrupt *interrupt) {
    __atomic_store_n(&interrupt->cancelled, 1, __ATOMIC_RELAXED);
}

int idm_interrupt_is_cancelled(const idm_interrupt *interrupt) {
    return __atomic_load_n(&interrupt->cancelled, __ATOMIC_RELAXED);
}

static int idm_interrupt_callback(void *opaque) {
    idm_interrupt *interrupt = opaque;
    return interrupt && __atomic_load_n(&interrupt->cancelled, __ATOMIC_RELAXED);
}

static AVIOInterruptCB idm_interrupt_cb(idm_interrupt *interrupt) {
    AVIOInterruptCB cb = { idm_interrupt_callback, interrupt };
    return cb;
}

// MARK: - Probing

// libavformat reads a probe's bytes from memory through this custom I/O.
typedef struct idm_source {
    uint8_t *bytes;
    size_t size;
    int64_t position;
} idm_source;

struct idm_input {
    AVFormatContext *format;
    AVIOContext *custom_io;
    idm_source source;
};

static int idm_source_read(void *opaque, uint8_t *buffer, int size) {
    idm_source *source = opaque;
    int64_t left = (int64_t)source->size - source->position;
    if (left <= 0) return AVERROR_EOF;
    int64_t count = size < left ? size : left;
    memcpy(buffer, source->bytes + source->position, (size_t)count);
    source->position += count;
    return (int)count;
}

static int64_t idm_source_seek(void *opaque, int64_t offset, int whence) {
    idm_source *source = opaque;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return (int64_t)source->size;
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = source->position; break;
    case SEEK_END: base = (int64_t)source->size; break;
    default: return AVERROR(EINVAL);
    }
    int64_t target = base + offset;
    if (target < 0 || target > (int64_t)source->size) return AVERROR(EINVAL);
    source->position = target;
    return target;
}

int idm_input_probe_memory(idm_input **out, const uint8_t *bytes, size_t size,
                           const char *format_name, idm_interrupt *interrupt) {
    int ready = idm_av_ready();
    if (ready < 0) return ready;
    const AVInputFormat *format = NULL;
    if (format_name && !(format = AV(av_find_input_format)(format_name))) return AVERROR_DEMUXER_NOT_FOUND;
    idm_input *input = AV(av_mallocz)(sizeof(idm_input));
    if (!input) return AVERROR(ENOMEM);
    int error = AVERROR(ENOMEM);
    input->format = AV(avformat_alloc_context)();
    input->source.bytes = AV(av_malloc)(size > 0 ? size : 1);
    const int io_buffer_size = 64 * 1024;
    uint8_t *io_buffer = AV(av_malloc)(io_buffer_size);
    if (!input->format || !input->source.bytes || !io_buffer) {
        AV(av_free)(io_buffer);
        goto fail;
    }
    if (size > 0) memcpy(input->source.bytes, bytes, size);
    input->source.size = size;
    input->custom_io = AV(avio_alloc_context)(io_buffer, io_buffer_size, 0, &input->source,
                                          idm_source_read, NULL, idm_source_seek);
    if (!input->custom_io) {
        AV(av_free)(io_buffer);
        goto fail;
    }
    input->format->interrupt_callback = idm_interrupt_cb(interrupt);
    input->format->pb = input->custom_io;
    input->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    error = AV(avformat_open_input)(&input->format, "memory", format, NULL);
    if (error < 0) goto fail;
    // A stream it cannot make sense of is no reason to fail: what was found is reported.
    AV(avformat_find_stream_info)(input->format, NULL);
    *out = input;
    return 0;
fail:
    idm_input_close(&input);
    return error;
}

void idm_input_close(idm_input **input) {
    if (!input || !*input) return;
    idm_input *in = *input;
    AV(avformat_close_input)(&in->format);  // also frees a context that failed to open
    if (in->custom_io) {
        AV(av_freep)(&in->custom_io->buffer);
        AV(avio_context_free)(&in->custom_io);
    }
    AV(av_free)(in->source.bytes);
    AV(av_freep)(input);
}

int idm_input_stream_count(const idm_input *input) { return (int)input->format->nb_streams; }

idm_stream_info idm_input_stream_info(const idm_input *input, int index) {
    const AVStream *stream = input->format->streams[index];
    AVRational rate = stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
    idm_stream_info info = {
        .index = index,
        .media_type = stream->codecpar->codec_type,
        .is_timed_id3 = stream->codecpar->codec_id == AV_CODEC_ID_TIMED_ID3,
        .frame_rate_num = rate.den > 0 ? rate.num : 0,
        .frame_rate_den = rate.den > 0 ? rate.den : 0,
    };
    return info;
}

// MARK: - Byte streams

struct idm_stream {
    AVIOContext *io;
    idm_interrupt *interrupt;
    int64_t deadline;       // av_gettime_relative() microseconds; 0: none
    int deadline_passed;
    int64_t read_until;     // this read's own limit, av_gettime_relative(); 0: none
};

// Polled by libavformat while it waits, so the overall deadline also ends a connect, a
// listen or a trickling response, not only a silent socket.
static int idm_stream_interrupt_callback(void *opaque) {
    idm_stream *stream = opaque;
    if (idm_interrupt_callback(stream->interrupt)) return 1;
    if (stream->deadline > 0 && AV(av_gettime_relative)() > stream->deadline) {
        __atomic_store_n(&stream->deadline_passed, 1, __ATOMIC_RELAXED);
        return 1;
    }
    return stream->read_until > 0 && AV(av_gettime_relative)() > stream->read_until;
}

int idm_stream_open(idm_stream **out, const char *url, const char *protocols, idm_interrupt *interrupt,
                    int64_t io_timeout_us, int64_t deadline_us, int64_t offset, int64_t end) {
    *out = NULL;
    int ready = idm_av_ready();
    if (ready < 0) return ready;
    idm_stream *stream = AV(av_mallocz)(sizeof(idm_stream));
    if (!stream) return AVERROR(ENOMEM);
    stream->interrupt = interrupt;
    stream->deadline = deadline_us > 0 ? AV(av_gettime_relative)() + deadline_us : 0;
    AVIOInterruptCB cb = { idm_stream_interrupt_callback, stream };
    AVDictionary *options = NULL;
    // Every protocol libavformat opens for this URL, nested ones and redirects included, must be on the list.
    AV(av_dict_set)(&options, "protocol_whitelist", protocols, 0);
    if (io_timeout_us > 0) {
        AV(av_dict_set_int)(&options, "rw_timeout", io_timeout_us, 0);
        // udp waits on its own clock, not rw_timeout (microseconds too); a listening tcp (ms) or
        // srt (us) socket waits for a peer on another one, for ever by default.
        if (!strncmp(url, "udp:", 4)) AV(av_dict_set_int)(&options, "timeout", io_timeout_us, 0);
        if (!strncmp(url, "tcp:", 4)) AV(av_dict_set_int)(&options, "listen_timeout", io_timeout_us / 1000, 0);
        if (!strncmp(url, "srt:", 4)) AV(av_dict_set_int)(&options, "listen_timeout", io_timeout_us, 0);
    }
    // A sub-range: http asks the server for it (a Range header); anything else seeks to it.
    int http = !strncmp(url, "http:", 5) || !strncmp(url, "https:", 6);
    if (http && offset > 0) AV(av_dict_set_int)(&options, "offset", offset, 0);
    if (http && end > 0) AV(av_dict_set_int)(&options, "end_offset", end, 0);
    int error = AV(avio_open2)(&stream->io, url, AVIO_FLAG_READ, &cb, &options);
    AV(av_dict_free)(&options);
    if (error >= 0 && !http && offset > 0) {
        int64_t position = AV(avio_seek)(stream->io, offset, SEEK_SET);
        if (position < 0) error = (int)position;
    }
    *out = stream;   // also on failure, so that the caller can ask whether the deadline passed; closed by it
    return error < 0 ? error : 0;
}

int idm_stream_read(idm_stream *stream, uint8_t *buffer, int size) {
    int count = AV(avio_read_partial)(stream->io, buffer, size);
    return count == 0 ? AVERROR_EOF : count;
}

int idm_stream_read_within(idm_stream *stream, uint8_t *buffer, int size, int64_t wait_us) {
    stream->read_until = AV(av_gettime_relative)() + wait_us;
    int count = AV(avio_read_partial)(stream->io, buffer, size);
    int waited_out = count < 0 && stream->read_until > 0 && AV(av_gettime_relative)() > stream->read_until
        && !idm_interrupt_callback(stream->interrupt) && !idm_stream_deadline_passed(stream);
    stream->read_until = 0;
    if (count == 0) return AVERROR_EOF;
    if (!waited_out) return count;
    // The protocols end a wait between polls, no byte taken; the context marks the
    // interruption as its end, which it is not.
    stream->io->eof_reached = 0;
    stream->io->error = 0;
    return AVERROR(EAGAIN);
}

int64_t idm_stream_size(idm_stream *stream) { return AV(avio_size)(stream->io); }

int idm_stream_deadline_passed(const idm_stream *stream) {
    return __atomic_load_n(&stream->deadline_passed, __ATOMIC_RELAXED);
}

void idm_stream_close(idm_stream **stream) {
    if (!stream || !*stream) return;
    AV(avio_closep)(&(*stream)->io);
    AV(av_freep)(stream);
}

// MARK: - Logs and errors

static void idm_log_callback(void *context, int level, const char *format, va_list arguments) {
    idm_log_handler handler = idm_current_log_handler;
    if (level > AV(av_log_get_level)()) return;
    char line[1024];
    int print_prefix = 1;
    AV(av_log_format_line2)(context, level, format, arguments, line, sizeof line, &print_prefix);
    if (level <= AV_LOG_ERROR) snprintf(idm_last_error_line, sizeof idm_last_error_line, "%s", line);
    if (handler) handler(level, line);
}

int idm_take_last_error(char *buffer, size_t size) {
    if (!idm_last_error_line[0]) return 0;
    if (buffer && size > 0) snprintf(buffer, size, "%s", idm_last_error_line);
    idm_last_error_line[0] = 0;
    return 1;
}

static void idm_apply_log_handler(void) {
    AV(av_log_set_level)(idm_log_level);
    AV(av_log_set_callback)(idm_log_callback);
}

void idm_set_log_handler(idm_log_handler handler, int max_level) {
    idm_current_log_handler = handler;
    idm_log_level = max_level;
    // Kept until libav is loaded, if it ever is.
    if (__atomic_load_n(&idm_av_usable, __ATOMIC_ACQUIRE)) idm_apply_log_handler();
}

int idm_error_eof(void) { return AVERROR_EOF; }

int idm_error_exit(void) { return AVERROR_EXIT; }

void idm_error_string(int error, char *buffer, size_t size) {
    if (idm_av_ready() == 0) {
        AV(av_strerror)(error, buffer, size);
    } else {
        snprintf(buffer, size, "%s", error < 0 && error > -4096 ? strerror(-error) : "libav error");
    }
}

// MARK: - Decryption

int idm_aes128_cbc(uint8_t *data, size_t size, const uint8_t key[16], uint8_t iv[16], int decrypt) {
    if (size % 16 != 0) return AVERROR_INVALIDDATA;
    int ready = idm_av_ready();
    if (ready < 0) return ready;
    struct AVAES *aes = AV(av_aes_alloc)();
    if (!aes) return AVERROR(ENOMEM);
    int error = AV(av_aes_init)(aes, key, 128, decrypt ? 1 : 0);
    if (error == 0) AV(av_aes_crypt)(aes, data, data, (int)(size / 16), iv, decrypt ? 1 : 0);
    AV(av_free)(aes);
    return error;
}

// MARK: - Memory

void idm_keep_large_blocks_mapped(void) {
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

void idm_release_free_memory(void) {
    malloc_trim(0);
}

static const char thread_caches_off[] = "glibc.malloc.tcache_count=0";

int idm_restart_without_thread_caches(char *const argv[]) {
    const char *before = getenv("GLIBC_TUNABLES");
    // The operator's own choice stands, and it ends the loop: the restarted process has one.
    if (before && strstr(before, "glibc.malloc.tcache_count")) return 0;
    size_t size = (before ? strlen(before) + 1 : 0) + sizeof thread_caches_off;
    char *tunables = malloc(size);
    if (!tunables) return -ENOMEM;
    snprintf(tunables, size, "%s%s%s", before ? before : "", before ? ":" : "", thread_caches_off);
    int error = setenv("GLIBC_TUNABLES", tunables, 1);
    free(tunables);
    if (error) return -errno;
    execv("/proc/self/exe", argv);
    error = -errno;
    if (before) setenv("GLIBC_TUNABLES", before, 1); else unsetenv("GLIBC_TUNABLES");
    return error;
}
