// The CPU a JPEG verification costs, per photo, on one thread, bodies already in memory:
//   tj       TurboJPEG's tjDecompress2 on the whole body at 1/8 scale (Thumbnailer.validate's
//            decode: RGB, accurate DCT, fancy upsampling, TJFLAG_LIMITSCANS);
//   stream   the daemon's streaming decoder (Sources/CJPEGWarnings/jpeg_stream.c, compiled in)
//            fed CHUNK bytes at a time, as StreamingVerifier feeds it;
// alternating photo by photo, ROUNDS passes. For `djpeg -scale 1/8` see verify-floor.sh.
//
//   verify_floor ROUNDS CHUNK FILE...          time the two methods
//   verify_floor --synthetic DIR COUNT BYTES   write COUNT photos like the downloads
//                                              benchmark's (SyntheticImages.jpeg: a noisy
//                                              gradient, 4:2:0, quality 90, ~BYTES each)
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <turbojpeg.h>
#include "CJPEGStream.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) { perror(path); exit(1); }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)length);
    if (bytes == NULL || fread(bytes, 1, (size_t)length, file) != (size_t)length) { perror(path); exit(1); }
    fclose(file);
    *size = (size_t)length;
    return bytes;
}

// SyntheticImages.rgb, the same xorshift noise over the same gradient.
static unsigned char *synthetic_rgb(int width, int height, uint64_t seed) {
    uint64_t state = (seed * 0x9E3779B97F4A7C15ull) | 1;
    unsigned char *pixels = malloc((size_t)width * (size_t)height * 3);
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            int noise = (int)(state & 0x3f);
            size_t i = ((size_t)y * (size_t)width + (size_t)x) * 3;
            pixels[i] = (unsigned char)(x * 255 / (width > 1 ? width - 1 : 1) / 2 + noise);
            pixels[i + 1] = (unsigned char)(y * 255 / (height > 1 ? height - 1 : 1) / 2 + noise);
            pixels[i + 2] = (unsigned char)(128 + noise);
        }
    }
    return pixels;
}

static unsigned long synthetic_jpeg(int side, uint64_t seed, unsigned char **out) {
    unsigned char *pixels = synthetic_rgb(side, side, seed);
    tjhandle handle = tjInitCompress();
    unsigned long size = 0;
    *out = NULL;
    if (tjCompress2(handle, pixels, side, 0, side, TJPF_RGB, out, &size, TJSAMP_420, 90, 0) != 0) size = 0;
    tjDestroy(handle);
    free(pixels);
    return size;
}

static int write_synthetic(const char *dir, int count, long bytes) {
    for (int index = 0; index < count; index++) {
        uint64_t seed = (uint64_t)index + 1;
        int side = 64;
        unsigned char *image = NULL;
        unsigned long size = synthetic_jpeg(side, seed, &image);
        for (int step = 0; step < 6 && size > 0; step++) {
            double ratio = (double)bytes / (double)size;
            if (ratio > 0.9 && ratio < 1.1) break;
            double scaled = (double)side * sqrt(ratio);
            side = scaled < 16 ? 16 : (int)(scaled + 0.5);
            tjFree(image);
            size = synthetic_jpeg(side, seed, &image);
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/photo-%02d.jpg", dir, index);
        FILE *file = fopen(path, "wb");
        if (file == NULL || fwrite(image, 1, size, file) != size) { perror(path); return 1; }
        fclose(file);
        printf("%s %d x %d, %lu bytes\n", path, side, side, size);
        tjFree(image);
    }
    return 0;
}

static int decode_tj(tjhandle handle, const unsigned char *body, size_t size, unsigned char *out) {
    int width, height, subsampling, colorspace;
    if (tjDecompressHeader3(handle, body, size, &width, &height, &subsampling, &colorspace) != 0) return -1;
    int scaledWidth = TJSCALED(width, ((tjscalingfactor){ 1, 8 }));
    int scaledHeight = TJSCALED(height, ((tjscalingfactor){ 1, 8 }));
    return tjDecompress2(handle, body, size, out, scaledWidth, 0, scaledHeight, TJPF_RGB, TJFLAG_LIMITSCANS);
}

static int decode_stream(const unsigned char *body, size_t size, size_t chunk) {
    ic_jpeg_stream *stream = ic_jpeg_stream_create();
    int status = IC_JPEG_STREAM_NEED_MORE;
    size_t offset = 0;
    while (status != IC_JPEG_STREAM_FAILED && status != IC_JPEG_STREAM_DONE) {
        size_t take = size - offset < chunk ? size - offset : chunk;
        int end = offset + take == size;
        status = ic_jpeg_stream_feed(stream, body + offset, take, end);
        offset += take;
        if (status == IC_JPEG_STREAM_HEADER) status = ic_jpeg_stream_start(stream, JCS_EXT_RGB, end);
        if (end && status == IC_JPEG_STREAM_NEED_MORE) break;
    }
    if (status != IC_JPEG_STREAM_DONE) fprintf(stderr, "stream: status %d, %s\n", status, ic_jpeg_stream_message(stream));
    ic_jpeg_stream_destroy(stream);
    return status == IC_JPEG_STREAM_DONE ? 0 : -1;
}

// The daemon's pattern: every photo verified at once (one stream each, as 16 downloads do),
// fed round-robin BURST bytes per turn in CHUNK-sized feeds; total CPU per photo.
static double interleaved(unsigned char **bodies, size_t *sizes, int count, size_t chunk, size_t burst) {
    ic_jpeg_stream **streams = calloc((size_t)count, sizeof *streams);
    size_t *offsets = calloc((size_t)count, sizeof *offsets);
    int *statuses = calloc((size_t)count, sizeof *statuses);
    double start = now();
    for (int index = 0; index < count; index++) streams[index] = ic_jpeg_stream_create();
    int live = count;
    while (live > 0) {
        live = 0;
        for (int index = 0; index < count; index++) {
            if (statuses[index] == IC_JPEG_STREAM_DONE || statuses[index] == IC_JPEG_STREAM_FAILED) continue;
            size_t limit = offsets[index] + burst < sizes[index] ? offsets[index] + burst : sizes[index];
            while (offsets[index] < limit) {
                size_t take = limit - offsets[index] < chunk ? limit - offsets[index] : chunk;
                int end = offsets[index] + take == sizes[index];
                int status = ic_jpeg_stream_feed(streams[index], bodies[index] + offsets[index], take, end);
                if (status == IC_JPEG_STREAM_HEADER) status = ic_jpeg_stream_start(streams[index], JCS_EXT_RGB, end);
                offsets[index] += take;
                statuses[index] = status;
                if (end && status != IC_JPEG_STREAM_DONE) statuses[index] = IC_JPEG_STREAM_FAILED;
            }
            if (statuses[index] == IC_JPEG_STREAM_FAILED) fprintf(stderr, "interleaved: %d failed\n", index);
            live++;
        }
    }
    for (int index = 0; index < count; index++) ic_jpeg_stream_destroy(streams[index]);
    double spent = now() - start;
    free(streams); free(offsets); free(statuses);
    return spent;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--synthetic") == 0) return write_synthetic(argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc < 4) {
        fprintf(stderr, "usage: verify_floor ROUNDS CHUNK FILE... | --synthetic DIR COUNT BYTES\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    size_t chunk = (size_t)atol(argv[2]);
    int count = argc - 3;
    unsigned char **bodies = calloc((size_t)count, sizeof *bodies);
    size_t *sizes = calloc((size_t)count, sizeof *sizes);
    size_t total = 0;
    for (int index = 0; index < count; index++) {
        bodies[index] = read_file(argv[3 + index], &sizes[index]);
        total += sizes[index];
    }
    unsigned char *out = malloc(64 << 20);
    tjhandle handle = tjInitDecompress();
    double tj = 0, streamed = 0;
    for (int round = 0; round < rounds; round++) {
        for (int index = 0; index < count; index++) {
            for (int method = 0; method < 2; method++) {
                int which = (round + index + method) % 2;
                double start = now();
                int rc = which == 0 ? decode_tj(handle, bodies[index], sizes[index], out)
                                    : decode_stream(bodies[index], sizes[index], chunk);
                double spent = now() - start;
                if (rc != 0 && which == 1) return 1;
                if (which == 0) tj += spent; else streamed += spent;
            }
        }
    }
    double photos = (double)count * rounds, megabytes = (double)total * rounds / 1e6;
    printf("tj      %7.2f ms/photo %6.1f MB/s\n", tj * 1e3 / photos, megabytes / tj);
    printf("stream  %7.2f ms/photo %6.1f MB/s  (chunk %zu)\n", streamed * 1e3 / photos, megabytes / streamed, chunk);
    double all = 0;
    for (int round = 0; round < rounds; round++) all += interleaved(bodies, sizes, count, chunk, 2 << 20);
    printf("interl. %7.2f ms/photo %6.1f MB/s  (all at once, 2 MiB bursts)\n", all * 1e3 / photos, megabytes / all);
    return 0;
}
