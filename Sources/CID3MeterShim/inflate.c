#include "id3meter_shim.h"

#include <stdlib.h>
#include <zlib.h>

// zlib's inflate over caller-sized buffers, so that the caller bounds what one call may produce
// (a compressed body is untrusted: 1 KB of deflate can stand for 1 MB).
struct idm_inflater {
    z_stream stream;
};

idm_inflater *idm_inflater_new(void) {
    idm_inflater *inflater = calloc(1, sizeof *inflater);
    if (!inflater) return NULL;
    // 15 + 32: the window zlib allows, the gzip or zlib header told from the first bytes.
    if (inflateInit2(&inflater->stream, 15 + 32) != Z_OK) {
        free(inflater);
        return NULL;
    }
    return inflater;
}

int idm_inflater_run(idm_inflater *inflater, const uint8_t *input, size_t input_size, size_t *consumed,
                     uint8_t *output, size_t output_size, size_t *produced) {
    z_stream *stream = &inflater->stream;
    stream->next_in = (Bytef *)input;
    stream->avail_in = (uInt)(input_size > UINT32_MAX ? UINT32_MAX : input_size);
    stream->next_out = output;
    stream->avail_out = (uInt)(output_size > UINT32_MAX ? UINT32_MAX : output_size);
    int result = inflate(stream, Z_NO_FLUSH);
    *consumed = (size_t)(stream->next_in - input);
    *produced = (size_t)(stream->next_out - output);
    switch (result) {
    case Z_OK: return 0;
    case Z_STREAM_END:
        // gzip allows members one after another (gunzip reads them all): the next starts afresh.
        inflateReset(stream);
        return 1;
    case Z_BUF_ERROR: return 0;  // no progress possible with what was given: more input wanted
    default: return -1;
    }
}

void idm_inflater_free(idm_inflater *inflater) {
    if (!inflater) return;
    inflateEnd(&inflater->stream);
    free(inflater);
}
