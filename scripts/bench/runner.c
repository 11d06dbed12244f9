/* Runs one command and reports its wall time and peak RSS: `runner OUTFILE COMMAND [ARG...]`.
 *
 * The harness starts every contender through this small process rather than straight from Python:
 * a child forked from the Python interpreter would carry the interpreter's pages in its ru_maxrss
 * (which survives execve), and the fork of a large process would be timed too. Writes
 * "WALL_SECONDS MAXRSS_KIB" to OUTFILE and exits with the command's status.
 */
#include "common.h"
#include <sys/wait.h>

int main(int argc, char **argv) {
    if (argc < 3) die("usage: runner OUTFILE COMMAND [ARG...]");
    double start = now_seconds();
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "runner: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) die("wait4: %s", strerror(errno));
    double wall = now_seconds() - start;
    FILE *out = fopen(argv[1], "w");
    if (!out) die("cannot write %s", argv[1]);
    fprintf(out, "%.6f %ld\n", wall, usage.ru_maxrss);
    fclose(out);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
