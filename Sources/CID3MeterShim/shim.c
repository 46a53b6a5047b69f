#include "id3meter_shim.h"

#include <errno.h>
#include <string.h>
#include <libavformat/avformat.h>
#include <libavutil/aes.h>
#include <libavutil/time.h>

struct idm_interrupt {
    int cancelled;
};

idm_interrupt *idm_interrupt_new(void) { return av_mallocz(sizeof(idm_interrupt)); }

void idm_interrupt_free(idm_interrupt *interrupt) { av_free(interrupt); }

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
    const AVInputFormat *format = NULL;
    if (format_name && !(format = av_find_input_format(format_name))) return AVERROR_DEMUXER_NOT_FOUND;
    idm_input *input = av_mallocz(sizeof(idm_input));
    if (!input) return AVERROR(ENOMEM);
    int error = AVERROR(ENOMEM);
    input->format = avformat_alloc_context();
    input->source.bytes = av_malloc(size > 0 ? size : 1);
    const int io_buffer_size = 64 * 1024;
    uint8_t *io_buffer = av_malloc(io_buffer_size);
    if (!input->format || !input->source.bytes || !io_buffer) {
        av_free(io_buffer);
        goto fail;
    }
    if (size > 0) memcpy(input->source.bytes, bytes, size);
    input->source.size = size;
    input->custom_io = avio_alloc_context(io_buffer, io_buffer_size, 0, &input->source,
                                          idm_source_read, NULL, idm_source_seek);
    if (!input->custom_io) {
        av_free(io_buffer);
        goto fail;
    }
    input->format->interrupt_callback = idm_interrupt_cb(interrupt);
    input->format->pb = input->custom_io;
    input->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    error = avformat_open_input(&input->format, "memory", format, NULL);
    if (error < 0) goto fail;
    // A stream it cannot make sense of is no reason to fail: what was found is reported.
    avformat_find_stream_info(input->format, NULL);
    *out = input;
    return 0;
fail:
    idm_input_close(&input);
    return error;
}

void idm_input_close(idm_input **input) {
    if (!input || !*input) return;
    idm_input *in = *input;
    avformat_close_input(&in->format);  // also frees a context that failed to open
    if (in->custom_io) {
        av_freep(&in->custom_io->buffer);
        avio_context_free(&in->custom_io);
    }
    av_free(in->source.bytes);
    av_freep(input);
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
};

// Polled by libavformat while it waits, so the overall deadline also ends a connect, a
// listen or a trickling response, not only a silent socket.
static int idm_stream_interrupt_callback(void *opaque) {
    idm_stream *stream = opaque;
    if (idm_interrupt_callback(stream->interrupt)) return 1;
    if (stream->deadline > 0 && av_gettime_relative() > stream->deadline) {
        __atomic_store_n(&stream->deadline_passed, 1, __ATOMIC_RELAXED);
        return 1;
    }
    return 0;
}

int idm_stream_open(idm_stream **out, const char *url, const char *protocols, idm_interrupt *interrupt,
                    int64_t io_timeout_us, int64_t deadline_us, int64_t offset, int64_t end) {
    idm_stream *stream = av_mallocz(sizeof(idm_stream));
    if (!stream) return AVERROR(ENOMEM);
    stream->interrupt = interrupt;
    stream->deadline = deadline_us > 0 ? av_gettime_relative() + deadline_us : 0;
    AVIOInterruptCB cb = { idm_stream_interrupt_callback, stream };
    AVDictionary *options = NULL;
    // Every protocol libavformat opens for this URL, nested ones and redirects included, must be on the list.
    av_dict_set(&options, "protocol_whitelist", protocols, 0);
    if (io_timeout_us > 0) {
        av_dict_set_int(&options, "rw_timeout", io_timeout_us, 0);
        // udp waits on its own clock, not rw_timeout (microseconds too); a listening tcp (ms) or
        // srt (us) socket waits for a peer on another one, for ever by default.
        if (!strncmp(url, "udp:", 4)) av_dict_set_int(&options, "timeout", io_timeout_us, 0);
        if (!strncmp(url, "tcp:", 4)) av_dict_set_int(&options, "listen_timeout", io_timeout_us / 1000, 0);
        if (!strncmp(url, "srt:", 4)) av_dict_set_int(&options, "listen_timeout", io_timeout_us, 0);
    }
    // A sub-range: http asks the server for it (a Range header); anything else seeks to it.
    int http = !strncmp(url, "http:", 5) || !strncmp(url, "https:", 6);
    if (http && offset > 0) av_dict_set_int(&options, "offset", offset, 0);
    if (http && end > 0) av_dict_set_int(&options, "end_offset", end, 0);
    int error = avio_open2(&stream->io, url, AVIO_FLAG_READ, &cb, &options);
    av_dict_free(&options);
    if (error >= 0 && !http && offset > 0) {
        int64_t position = avio_seek(stream->io, offset, SEEK_SET);
        if (position < 0) error = (int)position;
    }
    *out = stream;   // also on failure, so that the caller can ask whether the deadline passed; closed by it
    return error < 0 ? error : 0;
}

int idm_stream_read(idm_stream *stream, uint8_t *buffer, int size) {
    int count = avio_read_partial(stream->io, buffer, size);
    return count == 0 ? AVERROR_EOF : count;
}

int64_t idm_stream_size(idm_stream *stream) { return avio_size(stream->io); }

int idm_stream_deadline_passed(const idm_stream *stream) {
    return __atomic_load_n(&stream->deadline_passed, __ATOMIC_RELAXED);
}

void idm_stream_close(idm_stream **stream) {
    if (!stream || !*stream) return;
    avio_closep(&(*stream)->io);
    av_freep(stream);
}

// MARK: - Logs and errors

static idm_log_handler idm_current_log_handler;
// The last error line libav logged on this thread, for the error the caller then reports.
static __thread char idm_last_error_line[512];

static void idm_log_callback(void *context, int level, const char *format, va_list arguments) {
    idm_log_handler handler = idm_current_log_handler;
    if (!handler || level > av_log_get_level()) return;
    char line[1024];
    int print_prefix = 1;
    av_log_format_line2(context, level, format, arguments, line, sizeof line, &print_prefix);
    if (level <= AV_LOG_ERROR) snprintf(idm_last_error_line, sizeof idm_last_error_line, "%s", line);
    handler(level, line);
}

int idm_take_last_error(char *buffer, size_t size) {
    if (!idm_last_error_line[0]) return 0;
    if (buffer && size > 0) snprintf(buffer, size, "%s", idm_last_error_line);
    idm_last_error_line[0] = 0;
    return 1;
}

void idm_set_log_handler(idm_log_handler handler, int max_level) {
    idm_current_log_handler = handler;
    av_log_set_level(max_level);
    av_log_set_callback(handler ? idm_log_callback : av_log_default_callback);
}

int idm_error_eof(void) { return AVERROR_EOF; }

int idm_error_exit(void) { return AVERROR_EXIT; }

void idm_error_string(int error, char *buffer, size_t size) { av_strerror(error, buffer, size); }

// MARK: - Decryption

int idm_aes128_cbc(uint8_t *data, size_t size, const uint8_t key[16], uint8_t iv[16], int decrypt) {
    if (size % 16 != 0) return AVERROR_INVALIDDATA;
    struct AVAES *aes = av_aes_alloc();
    if (!aes) return AVERROR(ENOMEM);
    int error = av_aes_init(aes, key, 128, decrypt ? 1 : 0);
    if (error == 0) av_aes_crypt(aes, data, data, (int)(size / 16), iv, decrypt ? 1 : 0);
    av_free(aes);
    return error;
}
