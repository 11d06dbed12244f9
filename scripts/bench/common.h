/* Shared helpers for the C limit programs of scripts/bench (cc ... -lssl -lcrypto). */
#ifndef MTLS_BENCH_COMMON_H
#define MTLS_BENCH_COMMON_H
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>

__attribute__((unused)) static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    ERR_print_errors_fp(stderr);
    exit(2);
}

__attribute__((unused)) static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads a whole file; returns a malloc'd buffer and its length. */
__attribute__((unused)) static unsigned char *read_file(const char *path, size_t *length) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) die("cannot stat %s", path);
    size_t cap = st.st_size > 0 ? (size_t)st.st_size : 4096, len = 0;
    unsigned char *buf = malloc(cap + 1);
    for (;;) {
        if (len == cap) buf = realloc(buf, (cap *= 2) + 1);
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) die("cannot read %s", path);
        if (n == 0) break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = 0;
    *length = len;
    return buf;
}

/* Reads a list file: one path a line. */
__attribute__((unused)) static char **read_list(const char *path, int *count) {
    size_t len;
    char *text = (char *)read_file(path, &len);
    int cap = 1024, n = 0;
    char **items = malloc(sizeof(char *) * cap);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!*line) continue;
        if (n == cap) items = realloc(items, sizeof(char *) * (cap *= 2));
        items[n++] = line;
    }
    *count = n;
    return items;
}

/* Peak resident set size of this process, KiB. */
__attribute__((unused)) static long peak_rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* The machine-readable line the harness parses, on stderr: RESULT key=value ... */
__attribute__((unused)) static void result_line(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fprintf(stderr, "RESULT ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " rss_kib=%ld\n", peak_rss_kib());
    va_end(ap);
}
#endif
