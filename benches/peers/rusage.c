/*
 * rusage: run a command, wait for it, write its resource usage as JSON.
 *
 *   rusage OUT.json CMD [ARGS...]
 *
 * The harness starts tools through this tiny launcher rather than directly
 * from Python because Linux carries the pre-exec RSS of a forked process into
 * its ru_maxrss: a tool forked straight from the (big) Python harness would
 * report the harness's RSS as its own peak. Forked from this small process,
 * the tool's ru_maxrss is its own. The usage written covers the tool and every
 * descendant reaped inside its tree (wait4 semantics). Exit status mirrors the
 * tool's (128+N if it was killed by signal N).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUT.json CMD [ARGS...]\n", argv[0]);
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("wait4");
            return 2;
        }
    }
    FILE *out = fopen(argv[1], "w");
    if (out) {
        fprintf(out, "{\"utime\": %ld.%06ld, \"stime\": %ld.%06ld, \"maxrss_kib\": %ld}\n",
                (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
                (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, ru.ru_maxrss);
        fclose(out);
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 2;
}
