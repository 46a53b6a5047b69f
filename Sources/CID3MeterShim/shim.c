#include "id3meter_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
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

// MARK: - Inputs

// A custom I/O source: bytes in memory, then optionally a region of a file read with pread.
// Memory inputs are the bytes alone; file ranges put the file's opening PAT and PMT in front.
typedef struct idm_source {
    uint8_t *bytes;
    size_t size;
    int fd;
    int64_t file_offset;
    int64_t file_length;
    int64_t position;
} idm_source;

struct idm_input {
    AVFormatContext *format;
    AVPacket *packet;
    AVIOContext *custom_io;
    idm_source source;
};

static int64_t idm_source_length(const idm_source *source) {
    return (int64_t)source->size + (source->fd >= 0 ? source->file_length : 0);
}

static int idm_source_read(void *opaque, uint8_t *buffer, int size) {
    idm_source *source = opaque;
    int64_t left = idm_source_length(source) - source->position;
    if (left <= 0) return AVERROR_EOF;
    int64_t count = size < left ? size : left;
    if (source->position < (int64_t)source->size) {
        int64_t in_memory = (int64_t)source->size - source->position;
        if (count > in_memory) count = in_memory;
        memcpy(buffer, source->bytes + source->position, (size_t)count);
    } else {
        ssize_t got = pread(source->fd, buffer, (size_t)count, source->file_offset + source->position - (int64_t)source->size);
        if (got < 0) return AVERROR(errno);
        if (got == 0) return AVERROR_EOF;
        count = got;
    }
    source->position += count;
    return (int)count;
}

static int64_t idm_source_seek(void *opaque, int64_t offset, int whence) {
    idm_source *source = opaque;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return idm_source_length(source);
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = source->position; break;
    case SEEK_END: base = idm_source_length(source); break;
    default: return AVERROR(EINVAL);
    }
    int64_t target = base + offset;
    if (target < 0 || target > idm_source_length(source)) return AVERROR(EINVAL);
    source->position = target;
    return target;
}

/// A packet's byte position in the file: -1 for the prefix of a file range.
static int64_t idm_file_position(const idm_input *input, int64_t position) {
    if (position < 0 || input->source.fd < 0) return position;
    if (position < (int64_t)input->source.size) return -1;
    return input->source.file_offset + position - (int64_t)input->source.size;
}

static int idm_is_timed_id3(const AVStream *stream) {
    return stream->codecpar->codec_id == AV_CODEC_ID_TIMED_ID3;
}

static void idm_discard_all_but_timed_id3(AVFormatContext *format) {
    for (unsigned i = 0; i < format->nb_streams; i++) {
        AVStream *stream = format->streams[i];
        stream->discard = idm_is_timed_id3(stream) ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
    }
}

static int idm_input_finish_open(idm_input *input, const char *url, const AVInputFormat *format,
                                 AVDictionary **options, int probe_stream_info) {
    int error = avformat_open_input(&input->format, url, format, options);
    if (error < 0) return error;
    // Probing only fills in frame rates; a stream it cannot make sense of is no reason to fail.
    if (probe_stream_info) avformat_find_stream_info(input->format, NULL);
    idm_discard_all_but_timed_id3(input->format);
    input->packet = av_packet_alloc();
    return input->packet ? 0 : AVERROR(ENOMEM);
}

static idm_input *idm_input_alloc(idm_interrupt *interrupt) {
    idm_input *input = av_mallocz(sizeof(idm_input));
    if (!input) return NULL;
    input->format = avformat_alloc_context();
    if (!input->format) {
        av_free(input);
        return NULL;
    }
    input->format->interrupt_callback = idm_interrupt_cb(interrupt);
    input->source.fd = -1;
    return input;
}

static int idm_find_format(const char *format_name, const AVInputFormat **format) {
    *format = NULL;
    if (format_name && !(*format = av_find_input_format(format_name))) return AVERROR_DEMUXER_NOT_FOUND;
    return 0;
}

int idm_input_open_url(idm_input **out, const char *url, const char *format_name, idm_interrupt *interrupt,
                       int64_t io_timeout_us, int probe_stream_info) {
    const AVInputFormat *format;
    int error = idm_find_format(format_name, &format);
    if (error < 0) return error;
    idm_input *input = idm_input_alloc(interrupt);
    if (!input) return AVERROR(ENOMEM);
    AVDictionary *options = NULL;
    if (io_timeout_us > 0) av_dict_set_int(&options, "rw_timeout", io_timeout_us, 0);
    error = idm_input_finish_open(input, url, format, &options, probe_stream_info);
    av_dict_free(&options);
    if (error < 0) {
        idm_input_close(&input);
        return error;
    }
    *out = input;
    return 0;
}

static int idm_input_open_custom(idm_input **out, idm_input *input, const char *format_name, int probe_stream_info) {
    const AVInputFormat *format;
    int error = idm_find_format(format_name, &format);
    if (error < 0) goto fail;
    error = AVERROR(ENOMEM);
    const int io_buffer_size = 64 * 1024;
    uint8_t *io_buffer = av_malloc(io_buffer_size);
    if (!io_buffer) goto fail;
    input->custom_io = avio_alloc_context(io_buffer, io_buffer_size, 0, &input->source,
                                          idm_source_read, NULL, idm_source_seek);
    if (!input->custom_io) {
        av_free(io_buffer);
        goto fail;
    }
    input->format->pb = input->custom_io;
    input->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    error = idm_input_finish_open(input, "custom", format, NULL, probe_stream_info);
    if (error < 0) goto fail;
    *out = input;
    return 0;
fail:
    idm_input_close(&input);
    return error;
}

static int idm_copy_bytes(idm_input *input, const uint8_t *bytes, size_t size) {
    input->source.bytes = av_malloc(size > 0 ? size : 1);
    if (!input->source.bytes) return AVERROR(ENOMEM);
    if (size > 0) memcpy(input->source.bytes, bytes, size);
    input->source.size = size;
    return 0;
}

int idm_input_open_memory(idm_input **out, const uint8_t *bytes, size_t size,
                          const char *format_name, idm_interrupt *interrupt,
                          int probe_stream_info) {
    idm_input *input = idm_input_alloc(interrupt);
    if (!input) return AVERROR(ENOMEM);
    int error = idm_copy_bytes(input, bytes, size);
    if (error < 0) {
        idm_input_close(&input);
        return error;
    }
    return idm_input_open_custom(out, input, format_name, probe_stream_info);
}

int idm_input_open_file_range(idm_input **out, const char *path, int64_t offset, int64_t length,
                              const uint8_t *prefix, size_t prefix_size, const char *format_name,
                              idm_interrupt *interrupt) {
    idm_input *input = idm_input_alloc(interrupt);
    if (!input) return AVERROR(ENOMEM);
    int error = idm_copy_bytes(input, prefix, prefix_size);
    if (error == 0) {
        input->source.fd = open(path, O_RDONLY | O_CLOEXEC);
        if (input->source.fd < 0) error = AVERROR(errno);
    }
    if (error < 0) {
        idm_input_close(&input);
        return error;
    }
    posix_fadvise(input->source.fd, offset, length, POSIX_FADV_SEQUENTIAL);
    input->source.file_offset = offset;
    input->source.file_length = length;
    return idm_input_open_custom(out, input, format_name, 0);
}

void idm_input_close(idm_input **input) {
    if (!input || !*input) return;
    idm_input *in = *input;
    av_packet_free(&in->packet);
    avformat_close_input(&in->format);  // also frees a context that failed to open
    if (in->custom_io) {
        av_freep(&in->custom_io->buffer);
        avio_context_free(&in->custom_io);
    }
    av_free(in->source.bytes);
    if (in->source.fd >= 0) close(in->source.fd);
    av_freep(input);
}

int64_t idm_input_position(const idm_input *input) {
    return input->format->pb ? avio_tell(input->format->pb) : 0;
}

int idm_input_stream_count(const idm_input *input) { return (int)input->format->nb_streams; }

idm_stream_info idm_input_stream_info(const idm_input *input, int index) {
    const AVStream *stream = input->format->streams[index];
    AVRational rate = stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
    idm_stream_info info = {
        .index = index,
        .media_type = stream->codecpar->codec_type,
        .is_timed_id3 = idm_is_timed_id3(stream),
        .frame_rate_num = rate.den > 0 ? rate.num : 0,
        .frame_rate_den = rate.den > 0 ? rate.den : 0,
    };
    return info;
}

int idm_input_read_timed_id3(idm_input *input, idm_packet *packet) {
    for (;;) {
        av_packet_unref(input->packet);
        int error = av_read_frame(input->format, input->packet);
        if (error < 0) return error;
        AVStream *stream = input->format->streams[input->packet->stream_index];
        if (!idm_is_timed_id3(stream)) {
            // MPEG-TS adds streams while reading; stop assembling any new one too.
            stream->discard = AVDISCARD_ALL;
            continue;
        }
        packet->data = input->packet->data;
        packet->size = input->packet->size;
        packet->pts = input->packet->pts == AV_NOPTS_VALUE ? IDM_NO_PTS : input->packet->pts;
        packet->dts = input->packet->dts == AV_NOPTS_VALUE ? IDM_NO_PTS : input->packet->dts;
        packet->stream_index = input->packet->stream_index;
        packet->position = idm_file_position(input, input->packet->pos);
        packet->time_base_num = stream->time_base.num;
        packet->time_base_den = stream->time_base.den;
        return 0;
    }
}

// MARK: - Fetching

int idm_fetch(const char *url, idm_interrupt *interrupt, int64_t io_timeout_us,
              uint8_t **bytes, size_t *size) {
    AVIOInterruptCB cb = idm_interrupt_cb(interrupt);
    AVDictionary *options = NULL;
    if (io_timeout_us > 0) av_dict_set_int(&options, "rw_timeout", io_timeout_us, 0);
    AVIOContext *io = NULL;
    int error = avio_open2(&io, url, AVIO_FLAG_READ, &cb, &options);
    av_dict_free(&options);
    if (error < 0) return error;

    AVIOContext *sink = NULL;
    error = avio_open_dyn_buf(&sink);
    uint8_t chunk[64 * 1024];
    while (error >= 0) {
        int count = avio_read(io, chunk, sizeof chunk);
        if (count == AVERROR_EOF || count == 0) break;
        if (count < 0) {
            error = count;
            break;
        }
        avio_write(sink, chunk, count);
    }
    avio_closep(&io);
    if (!sink) return error;
    uint8_t *buffer = NULL;
    int length = avio_close_dyn_buf(sink, &buffer);
    if (error < 0) {
        av_free(buffer);
        return error;
    }
    *bytes = buffer;
    *size = (size_t)length;
    return 0;
}

void idm_free(void *pointer) { av_free(pointer); }

// MARK: - Logs and errors

static idm_log_handler idm_current_log_handler;

static void idm_log_callback(void *context, int level, const char *format, va_list arguments) {
    idm_log_handler handler = idm_current_log_handler;
    if (!handler || level > av_log_get_level()) return;
    char line[1024];
    int print_prefix = 1;
    av_log_format_line2(context, level, format, arguments, line, sizeof line, &print_prefix);
    handler(level, line);
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
