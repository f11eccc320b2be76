// The floor of an inline memory-hit answer on this machine: a minimal single-threaded epoll
// server that answers every NDJSON request line with a thumbnail.show-shaped answer carrying
// BYTES of base64, in the daemon's wire format, and does nothing else. show-floor.sh drives it
// with the daemon's own generator (`imagecache-bench show load --inline`).
//
//   show_floor SOCKET MODE [BYTES]
//   MODE 0: the whole line copied into a buffer and written at once
//   MODE 1: the head written, the base64 sent from a memfd by sendfile, the line's end written
//   MODE 2: the head written, then base64 + the line's end sent from a memfd by sendfile
//           (what the daemon does: SealedMemoryFile, InlineBase64.lineEnd)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

typedef struct { int fd; char in[4096]; int length; } connection;

static const char *tail = "\"}}\n";
static char *text;
static size_t text_length;
static int text_file, text_and_tail_file, mode;
static char line[256 * 1024];

static void write_all(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t wrote = write(fd, bytes, count);
        if (wrote < 0) { if (errno == EAGAIN || errno == EINTR) continue; return; }
        bytes += wrote; count -= (size_t)wrote;
    }
}

static void send_file(int fd, int file, size_t count) {
    off_t offset = 0;
    while (count > 0) {
        ssize_t sent = sendfile(fd, file, &offset, count);
        if (sent < 0) { if (errno == EAGAIN || errno == EINTR) continue; return; }
        count -= (size_t)sent;
    }
}

static void answer(int fd, const char *id, int id_length) {
    char head[512];
    int head_length = snprintf(head, sizeof head,
        "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{\"slot\":0,\"view\":\"main\",\"photo\":null,"
        "\"path\":\"/var/cache/imagecached/data/ab/abcdef\",\"width\":244,\"height\":244,\"bytes\":30682,"
        "\"mime\":\"image/jpeg\",\"source\":\"memory\",\"data\":\"", id_length, id);
    switch (mode) {
    case 0:
        memcpy(line, head, head_length);
        memcpy(line + head_length, text, text_length);
        memcpy(line + head_length + text_length, tail, 4);
        write_all(fd, line, head_length + text_length + 4);
        break;
    case 1:
        write_all(fd, head, head_length);
        send_file(fd, text_file, text_length);
        write_all(fd, tail, 4);
        break;
    default:
        write_all(fd, head, head_length);
        send_file(fd, text_and_tail_file, text_length + 4);
    }
}

static int memory_file(const char *first, size_t first_length, const char *second, size_t second_length) {
    int fd = memfd_create("show-floor", MFD_CLOEXEC);
    write_all(fd, first, first_length);
    if (second_length > 0) write_all(fd, second, second_length);
    return fd;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s SOCKET MODE [BYTES]\n", argv[0]); return 2; }
    mode = atoi(argv[2]);
    text_length = argc > 3 ? (size_t)atol(argv[3]) : 40912;
    if (text_length + 600 > sizeof line) { fprintf(stderr, "BYTES too large\n"); return 2; }
    text = malloc(text_length);
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < text_length; i++) text[i] = alphabet[i % 64];
    text_file = memory_file(text, text_length, NULL, 0);
    text_and_tail_file = memory_file(text, text_length, tail, 4);

    int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    unlink(argv[1]);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 128) != 0) {
        perror("bind/listen"); return 1;
    }
    int poller = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = { .events = EPOLLIN, .data.ptr = NULL };
    epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
    struct epoll_event ready[64];
    for (;;) {
        int count = epoll_wait(poller, ready, 64, -1);
        for (int i = 0; i < count; i++) {
            connection *c = ready[i].data.ptr;
            if (c == NULL) {
                int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) continue;
                c = calloc(1, sizeof *c);
                c->fd = fd;
                struct epoll_event added = { .events = EPOLLIN, .data.ptr = c };
                epoll_ctl(poller, EPOLL_CTL_ADD, fd, &added);
                continue;
            }
            ssize_t got = read(c->fd, c->in + c->length, sizeof c->in - c->length);
            if (got <= 0) {
                if (got < 0 && errno == EAGAIN) continue;
                close(c->fd); free(c); continue;
            }
            c->length += (int)got;
            char *start = c->in, *newline;
            while ((newline = memchr(start, '\n', c->in + c->length - start)) != NULL) {
                char *id = memmem(start, newline - start, "\"id\":", 5);
                if (id != NULL) {
                    id += 5;
                    int id_length = 0;
                    while (id + id_length < newline && id[id_length] >= '0' && id[id_length] <= '9') id_length++;
                    answer(c->fd, id, id_length);
                }
                start = newline + 1;
            }
            c->length = (int)(c->in + c->length - start);
            memmove(c->in, start, c->length);
        }
    }
}
