#include "CJPEGStream.h"
#include "warning_record.h"
#include <jpegint.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { READING_HEADER, HEADER_READ, STARTING, SCANNING, FINISHING, DONE, FAILED };

struct ic_jpeg_stream {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr errors;
    struct jpeg_source_mgr source;
    jmp_buf jump;
    /// The bytes libjpeg has not consumed yet, moved to the front at every feed.
    unsigned char *buffer;
    size_t capacity;
    /// Bytes libjpeg asked to skip past what had arrived (a long APPn/COM segment).
    size_t skip;
    int end_of_input;
    /// libjpeg resumes a suspended unit (a marker segment, an MCU) from its start: it is run
    /// again only once the held bytes have doubled since it suspended, so a unit trickling in
    /// byte by byte costs O(n log n), not O(n^2).
    size_t resume_at;
    int state;
    ic_jpeg_stream_info info;
    ic_jpeg_warnings warnings;
    JSAMPARRAY rows;
    size_t rowBytes;
    /// libjpeg's sequential Huffman `decode_mcu`, wrapped by `ic_stream_decode_mcu` (NULL
    /// until the entropy decoder exists, and for progressive or arithmetic frames).
    boolean (*huffman_decode_mcu)(j_decompress_ptr, JBLOCKROW *);
    struct jpeg_progress_mgr progress;
    char message[JMSG_LENGTH_MAX];
};

/// libjpeg-turbo's sequential Huffman decoder (jdhuff.c, `decode_mcu`) takes its fast path for
/// an MCU only when at least this many bytes per block of the MCU are in the source buffer
/// (`BUFSIZE`, DCTSIZE2 * 8), else its slow path. The two paths differ in more than speed: on
/// a bad Huffman code the slow one warns (JWRN_HUFF_BAD_CODE) and the fast one silently
/// decodes a zero. TurboJPEG's memory source always holds the rest of the file, so a
/// whole-buffer decode takes the fast path for every MCU but the last few; a suspending
/// source holding only what has arrived would take the slow path near the end of every
/// chunk — slower, and with verdicts that depend on how the body was cut.
#define IC_FAST_HUFFMAN_BYTES_PER_BLOCK ((size_t)DCTSIZE2 * 8)

/// Suspends an MCU that libjpeg would start on its slow path only because the rest of the
/// body has not arrived yet, so every MCU is decoded on the path a whole-buffer decode takes
/// for it (the same warnings, the same speed): while more bytes will come, an MCU is decoded
/// only with at least `IC_FAST_HUFFMAN_BYTES_PER_BLOCK` bytes per block held; at the end of
/// the body, as the whole-buffer decode does, with whatever is left. A suspended MCU is
/// retried from its start on a later feed (libjpeg's own suspension contract for
/// `decode_mcu`: returning FALSE changes no state).
static boolean ic_stream_decode_mcu(j_decompress_ptr cinfo, JBLOCKROW *data) {
    ic_jpeg_stream *stream = (ic_jpeg_stream *)cinfo->client_data;
    if (!stream->end_of_input
        && cinfo->src->bytes_in_buffer < IC_FAST_HUFFMAN_BYTES_PER_BLOCK * (size_t)cinfo->blocks_in_MCU) {
        return FALSE;
    }
    return stream->huffman_decode_mcu(cinfo, data);
}

/// libjpeg calls its progress hook before absorbing each row of a multi-scan frame and before
/// each jpeg_read_scanlines: after `jpeg_start_decompress` created the entropy decoder (and
/// after each new scan's `start_pass`) and before it decodes anything, so this is where
/// `ic_stream_decode_mcu` is put in front of a sequential Huffman decoder (again, should a
/// scan's start have chosen the routine anew). The progressive decoder has no fast path and
/// sets its own `decode_mcu` per scan; arithmetic frames are never streamed.
static void ic_stream_progress(j_common_ptr common) {
    j_decompress_ptr cinfo = (j_decompress_ptr)common;
    ic_jpeg_stream *stream = (ic_jpeg_stream *)cinfo->client_data;
    if (cinfo->entropy == NULL || cinfo->progressive_mode || cinfo->arith_code) return;
    if (cinfo->entropy->decode_mcu == ic_stream_decode_mcu || cinfo->entropy->decode_mcu == NULL) return;
    stream->huffman_decode_mcu = cinfo->entropy->decode_mcu;
    cinfo->entropy->decode_mcu = ic_stream_decode_mcu;
}

static void ic_stream_error_exit(j_common_ptr cinfo) {
    ic_jpeg_stream *stream = (ic_jpeg_stream *)cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, stream->message);
    longjmp(stream->jump, 1);
}

static void ic_stream_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return; // trace messages
    ic_jpeg_stream *stream = (ic_jpeg_stream *)cinfo->client_data;
    cinfo->err->num_warnings++;
    ic_record_warning(&stream->warnings, cinfo->err->msg_code);
}

static void ic_stream_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void ic_stream_init_source(j_decompress_ptr cinfo) { (void)cinfo; }
static void ic_stream_term_source(j_decompress_ptr cinfo) { (void)cinfo; }

static const JOCTET ic_fake_eoi[2] = { 0xFF, JPEG_EOI };

/// Suspends while the body goes on; at its end, does what TurboJPEG's memory source does.
static boolean ic_stream_fill_input_buffer(j_decompress_ptr cinfo) {
    ic_jpeg_stream *stream = (ic_jpeg_stream *)cinfo->client_data;
    if (!stream->end_of_input) return FALSE;
    WARNMS(cinfo, JWRN_JPEG_EOF);
    stream->source.next_input_byte = ic_fake_eoi;
    stream->source.bytes_in_buffer = 2;
    return TRUE;
}

static void ic_stream_skip_input_data(j_decompress_ptr cinfo, long count) {
    ic_jpeg_stream *stream = (ic_jpeg_stream *)cinfo->client_data;
    if (count <= 0) return;
    size_t remaining = (size_t)count;
    while (remaining > stream->source.bytes_in_buffer) {
        remaining -= stream->source.bytes_in_buffer;
        stream->source.next_input_byte += stream->source.bytes_in_buffer;
        stream->source.bytes_in_buffer = 0;
        if (!stream->end_of_input) {
            stream->skip += remaining; // dropped from the next chunks as they arrive
            return;
        }
        (void)ic_stream_fill_input_buffer(cinfo);
    }
    stream->source.next_input_byte += remaining;
    stream->source.bytes_in_buffer -= remaining;
}

ic_jpeg_stream *ic_jpeg_stream_create(void) {
    ic_jpeg_stream *stream = calloc(1, sizeof *stream);
    if (stream == NULL) return NULL;
    stream->cinfo.err = jpeg_std_error(&stream->errors);
    stream->errors.error_exit = ic_stream_error_exit;
    stream->errors.emit_message = ic_stream_emit_message;
    stream->errors.output_message = ic_stream_output_message;
    stream->cinfo.client_data = stream;
    stream->warnings.recorded = 1;
    if (setjmp(stream->jump)) {
        // Only an allocation failure inside jpeg_create_decompress lands here.
        free(stream);
        return NULL;
    }
    jpeg_create_decompress(&stream->cinfo);
    stream->source.init_source = ic_stream_init_source;
    stream->source.fill_input_buffer = ic_stream_fill_input_buffer;
    stream->source.skip_input_data = ic_stream_skip_input_data;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = ic_stream_term_source;
    stream->cinfo.src = &stream->source;
    stream->progress.progress_monitor = ic_stream_progress;
    stream->cinfo.progress = &stream->progress;
    stream->state = READING_HEADER;
    return stream;
}

void ic_jpeg_stream_destroy(ic_jpeg_stream *stream) {
    if (stream == NULL) return;
    jpeg_destroy_decompress(&stream->cinfo);
    free(stream->buffer);
    free(stream);
}

/// Keeps the unconsumed bytes and appends `size` new ones (after any pending skip).
static int ic_stream_append(ic_jpeg_stream *stream, const unsigned char *data, size_t size) {
    size_t dropped = stream->skip < size ? stream->skip : size;
    stream->skip -= dropped;
    data += dropped;
    size -= dropped;
    size_t held = stream->source.bytes_in_buffer;
    if (held > 0 && stream->source.next_input_byte == ic_fake_eoi) held = 0;
    if (held > SIZE_MAX - size) return 0;
    size_t needed = held + size;
    if (needed > stream->capacity) {
        size_t capacity = stream->capacity < 4096 ? 4096 : stream->capacity;
        while (capacity < needed) capacity = capacity > SIZE_MAX / 2 ? needed : capacity * 2;
        unsigned char *grown = malloc(capacity);
        if (grown == NULL) return 0;
        if (held > 0) memcpy(grown, stream->source.next_input_byte, held);
        free(stream->buffer);
        stream->buffer = grown;
        stream->capacity = capacity;
    } else if (held > 0 && stream->source.next_input_byte != stream->buffer) {
        memmove(stream->buffer, stream->source.next_input_byte, held);
    }
    if (size > 0) memcpy(stream->buffer + held, data, size);
    stream->source.next_input_byte = stream->buffer;
    stream->source.bytes_in_buffer = needed;
    return 1;
}

/// Runs libjpeg from its current state as far as the held bytes allow.
static int ic_stream_run(ic_jpeg_stream *stream) {
    struct jpeg_decompress_struct *cinfo = &stream->cinfo;
    if (stream->state == FAILED) return IC_JPEG_STREAM_FAILED;
    if (stream->state == DONE) return IC_JPEG_STREAM_DONE;
    if (setjmp(stream->jump)) {
        stream->state = FAILED;
        return IC_JPEG_STREAM_FAILED;
    }
    switch (stream->state) {
    case READING_HEADER:
        if (jpeg_read_header(cinfo, TRUE) == JPEG_SUSPENDED) return IC_JPEG_STREAM_NEED_MORE;
        cinfo->scale_num = 1;
        cinfo->scale_denom = 8;
        cinfo->dct_method = JDCT_IFAST;
        cinfo->do_fancy_upsampling = FALSE;
        jpeg_calc_output_dimensions(cinfo);
        stream->info.width = cinfo->image_width;
        stream->info.height = cinfo->image_height;
        stream->info.components = cinfo->num_components;
        stream->info.colorSpace = (int)cinfo->jpeg_color_space;
        stream->info.multipleScans = jpeg_has_multiple_scans(cinfo) ? 1 : 0;
        stream->info.scaledWidth = cinfo->output_width;
        stream->info.scaledHeight = cinfo->output_height;
        stream->state = HEADER_READ;
        return IC_JPEG_STREAM_HEADER;
    case HEADER_READ:
        return IC_JPEG_STREAM_HEADER;
    case STARTING:
        if (!jpeg_start_decompress(cinfo)) return IC_JPEG_STREAM_NEED_MORE;
        stream->rowBytes = (size_t)cinfo->output_width * (size_t)cinfo->output_components;
        stream->rows = (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE, (JDIMENSION)stream->rowBytes,
                                                   (JDIMENSION)cinfo->rec_outbuf_height);
        stream->state = SCANNING;
        /* fallthrough */
    case SCANNING:
        while (cinfo->output_scanline < cinfo->output_height) {
            if (jpeg_read_scanlines(cinfo, stream->rows, (JDIMENSION)cinfo->rec_outbuf_height) == 0) {
                return IC_JPEG_STREAM_NEED_MORE;
            }
        }
        stream->state = FINISHING;
        /* fallthrough */
    case FINISHING:
        if (!jpeg_finish_decompress(cinfo)) return IC_JPEG_STREAM_NEED_MORE;
        stream->state = DONE;
        return IC_JPEG_STREAM_DONE;
    default:
        return IC_JPEG_STREAM_FAILED;
    }
}

int ic_jpeg_stream_feed(ic_jpeg_stream *stream, const unsigned char *data, size_t size, int end_of_input) {
    if (stream->state == FAILED) return IC_JPEG_STREAM_FAILED;
    if (stream->state == DONE) return IC_JPEG_STREAM_DONE;
    if (!ic_stream_append(stream, data, size)) {
        snprintf(stream->message, sizeof stream->message, "out of memory for the input buffer");
        stream->state = FAILED;
        return IC_JPEG_STREAM_FAILED;
    }
    if (end_of_input) stream->end_of_input = 1;
    if (!stream->end_of_input && stream->source.bytes_in_buffer < stream->resume_at) {
        return stream->state == HEADER_READ ? IC_JPEG_STREAM_HEADER : IC_JPEG_STREAM_NEED_MORE;
    }
    int status = ic_stream_run(stream);
    stream->resume_at = status == IC_JPEG_STREAM_NEED_MORE ? 2 * stream->source.bytes_in_buffer : 0;
    return status;
}

int ic_jpeg_stream_start(ic_jpeg_stream *stream, int out_color_space, int end_of_input) {
    if (stream->state != HEADER_READ) return ic_stream_run(stream);
    stream->cinfo.out_color_space = (J_COLOR_SPACE)out_color_space;
    if (end_of_input) stream->end_of_input = 1;
    stream->state = STARTING;
    int status = ic_stream_run(stream);
    stream->resume_at = status == IC_JPEG_STREAM_NEED_MORE ? 2 * stream->source.bytes_in_buffer : 0;
    return status;
}

const ic_jpeg_stream_info *ic_jpeg_stream_info_of(const ic_jpeg_stream *stream) { return &stream->info; }

const ic_jpeg_warnings *ic_jpeg_stream_warnings(const ic_jpeg_stream *stream) { return &stream->warnings; }

size_t ic_jpeg_stream_held_bytes(const ic_jpeg_stream *stream) {
    return stream->capacity + stream->rowBytes * (size_t)(stream->cinfo.rec_outbuf_height > 0 ? stream->cinfo.rec_outbuf_height : 0);
}

const char *ic_jpeg_stream_message(const ic_jpeg_stream *stream) { return stream->message; }
