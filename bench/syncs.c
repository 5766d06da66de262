/* The sync step of a 200-file batch, alone: the file operations of (a) in BENCHMARKS.md without
 * patchgate, to see what each way of making the files durable costs on a file system.
 *
 *   cc -O2 -pthread bench/syncs.c -o /tmp/syncs
 *   for m in 0 1 2; do sync; /tmp/syncs DIR $m; done    # DIR on the file system to measure
 *
 * Each run creates 200 files of 14 KB in DIR (t<i>.tmp), then makes them durable by mode:
 *   0  their write-out started as each is written (sync_file_range), then an fsync of each on 8
 *      threads (patchgate's per-file syncs, fs::sync_spread)
 *   1  the write-out started the same way, then one syncfs of the file system (fs::together)
 *   2  one syncfs, without the write-out started early
 * then renames each over f<i> and syncs the folder (an fsync; a syncfs in modes 1 and 2), and
 * prints each step's milliseconds. BENCHMARKS.md (ai) quotes the "sync" column. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { FILES = 200, LANES = 8, SIZE = 14000 };
static int fds[FILES];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *lane(void *arg) {
    for (long i = (long)arg; i < FILES; i += LANES)
        if (fsync(fds[i]) != 0) perror("fsync");
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR MODE(0|1|2)\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    int mode = atoi(argv[2]);
    char *buf = malloc(SIZE), from[4096], to[4096];
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    if (!buf || d < 0) {
        perror(dir);
        return 1;
    }
    srand((unsigned)now());
    double t0 = now();
    for (int i = 0; i < FILES; i++) {
        for (int j = 0; j < SIZE; j++) buf[j] = 'a' + rand() % 26;
        snprintf(from, sizeof from, "%s/t%d.tmp", dir, i);
        fds[i] = open(from, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fds[i] < 0 || write(fds[i], buf, SIZE) != SIZE) {
            perror(from);
            return 1;
        }
        if (mode != 2) sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE);
    }
    double t1 = now();
    if (mode == 0) {
        pthread_t th[LANES];
        for (long k = 0; k < LANES; k++) pthread_create(&th[k], NULL, lane, (void *)k);
        for (int k = 0; k < LANES; k++) pthread_join(th[k], NULL);
    } else if (syncfs(d) != 0) {
        perror("syncfs");
    }
    double t2 = now();
    for (int i = 0; i < FILES; i++) {
        close(fds[i]);
        snprintf(from, sizeof from, "%s/t%d.tmp", dir, i);
        snprintf(to, sizeof to, "%s/f%d", dir, i);
        if (rename(from, to) != 0) perror(from);
    }
    double t3 = now();
    if ((mode == 0 ? fsync(d) : syncfs(d)) != 0) perror("folder sync");
    double t4 = now();
    printf("mode %d write %.2f sync %.2f rename %.2f folder %.2f total %.2f ms\n", mode, t1 - t0,
           t2 - t1, t3 - t2, t4 - t3, t4 - t0);
    return 0;
}
