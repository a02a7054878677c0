/*
 * flowdpd's habits as a daemon: logging, the run directory, locks,
 * the pidfile and --detach.
 *
 * Logging.  One line per message, "TIME|LEVEL|MESSAGE", to --log-file, or
 * to standard error, or (detached without --log-file, when standard error
 * is /dev/null) to syslog.  log_reopen() opens --log-file again under its
 * name, so that logrotate can move the file away and signal the daemon
 * (SIGHUP, or the vlog/reopen method) instead of restarting it, as
 * Open vSwitch's "ovs-appctl vlog/reopen".  If the reopen fails the old
 * stream is kept, so nothing is lost but the rename.
 *
 * Locks.  lock_file() takes a POSIX record lock (fcntl F_SETLK) on the
 * whole of a file and holds it while its descriptor is open, that is for
 * the daemon's life; the kernel drops it when the process dies, however it
 * dies, so a lock never goes stale.  A second daemon finds the lock taken
 * and F_GETLK names the holder's pid.  Two uses:
 *
 *   --db=FILE locks FILE.lock, a file of its own beside the journal, not
 *   the journal itself: compaction renames a new journal over FILE, and a
 *   lock on the old inode would not cover the new one (and POSIX locks
 *   are dropped when the process closes *any* descriptor of the file,
 *   which compaction does).  FILE.lock is never removed: removing it
 *   would let a third daemon lock a fresh file while a second still waits
 *   on the old one.  This is how Open vSwitch's lockfile.c guards its
 *   databases.
 *
 *   --pidfile locks the pidfile itself before writing it, so a live
 *   daemon's pidfile is never truncated by a second one, and on exit its
 *   owner removes it (only if the name still leads to the file it
 *   locked) before letting go of the lock.
 *
 * A lock is taken on a descriptor that was opened before the lock was
 * granted; if the file was removed or replaced meanwhile (an exiting
 * daemon removes its pidfile), the lock is on a file no one will find, so
 * lock_file() checks that the name still leads to the locked file and
 * tries again if not.
 *
 * The run directory (of the default socket and pidfile) is created, with
 * its parents, mode 0755 (less what the umask takes away): the socket in
 * it is 0600, the pidfile 0644.  A run directory that others may write
 * and that is not ours is refused: anyone could put a socket, a pidfile
 * or a symbolic link in our names there before we do.
 *
 * --detach forks before any thread exists; the parent waits on a pipe
 * until the child is ready to serve and exits 0, or exits 1 if the child
 * died first (its error is on the terminal, which the child keeps until it
 * is ready).  The child starts a new session at once, and once ready
 * puts /dev/null on standard input, output and error.  It keeps its working
 * directory, so that relative --db, --log-file and --pidfile names keep
 * working (a journal's compaction and a log's reopen use them again).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "utilities/flowdpd.h"
#include "utilities/tool.h"

/* ---------------------------------------------------------------------- */
/* Logging.                                                                */

static const char *const level_names[] = { "err", "warn", "info", "dbg" };
static enum log_level log_threshold = L_INFO;
static FILE *log_stream;        /* --log-file, or NULL for stderr. */
static char *log_path;          /* --log-file, for log_reopen(). */
static bool log_to_syslog;      /* Detached without --log-file. */

void
vlog(enum log_level level, const char *format, ...)
{
    static const int syslog_levels[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
                                         LOG_DEBUG };
    struct timespec ts;
    struct tm tm;
    char when[32];
    va_list args;

    if (level > log_threshold) {
        return;
    }
    if (log_to_syslog) {
        va_start(args, format);
        vsyslog(syslog_levels[level], format, args);
        va_end(args);
        return;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    FILE *f = log_stream ? log_stream : stderr;
    fprintf(f, "%s.%03ldZ|%s|", when, ts.tv_nsec / 1000000,
            level_names[level]);
    va_start(args, format);
    vfprintf(f, format, args);
    va_end(args);
    fputc('\n', f);
    fflush(f);
}

int
log_set_level(const char *name)
{
    for (size_t i = 0; i < sizeof level_names / sizeof *level_names; i++) {
        if (!strcmp(name, level_names[i])) {
            log_threshold = (enum log_level) i;
            return 0;
        }
    }
    return EINVAL;
}

void
log_open(const char *path)
{
    log_path = strdup(path);
    if (!log_path) {
        fatal("out of memory");
    }
    log_stream = fopen(path, "a");
    if (!log_stream) {
        fatal("--log-file: %s: %s", path, strerror(errno));
    }
}

int
log_reopen(void)
{
    if (!log_path) {
        return 0;
    }
    FILE *stream = fopen(log_path, "a");
    if (!stream) {
        int error = errno;
        vlog(L_ERR, "reopening the log %s: %s (still logging to the file "
             "opened before)", log_path, strerror(error));
        return error;
    }
    fclose(log_stream);
    log_stream = stream;
    vlog(L_INFO, "log reopened");
    return 0;
}

void
log_close(void)
{
    if (log_stream) {
        fclose(log_stream);
        log_stream = NULL;
    }
    free(log_path);
    log_path = NULL;
}

/* ---------------------------------------------------------------------- */
/* The run directory.                                                      */

const char *
rundir(void)
{
    const char *d = getenv("FLOWDP_RUNDIR");

    return d && *d ? d : FDP_RUNDIR;
}

char *
default_path(const char *file)
{
    char *p = xasprintf("%s/%s", rundir(), file);

    if (!p) {
        fatal("out of memory");
    }
    return p;
}

/* Refuses (exits) if 'dir' is not a directory, or if others may write to
 * it and it is neither ours nor root's (then anyone could plant files in
 * our names there). */
static void
check_rundir(const char *dir)
{
    struct stat st;

    if (stat(dir, &st)) {
        fatal("run directory %s: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        fatal("run directory %s: not a directory", dir);
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_uid != geteuid()
        && st.st_uid != 0) {
        fatal("run directory %s: writable by others and owned by uid %lu, "
              "not by us: refusing to put a socket or pidfile there (set "
              "FLOWDP_RUNDIR to a directory of ours, or use --unix and "
              "--pidfile=FILE)", dir, (unsigned long) st.st_uid);
    }
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
        fatal("run directory %s: writable by everyone and not sticky: "
              "refusing to put a socket or pidfile there", dir);
    }
}

void
make_rundir(void)
{
    const char *dir = rundir();
    char *copy = strdup(dir);

    if (!copy) {
        fatal("out of memory");
    }
    /* mkdir -p: each missing component, 0755 less the umask (a socket
     * 0600 and a pidfile 0644 live there; others may read the pid, as
     * with /run/openvswitch). */
    for (char *p = copy + 1; ; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = '\0';
            if (mkdir(copy, 0755) && errno != EEXIST) {
                fatal("%s: %s", copy, strerror(errno));
            }
            *p = c;
            if (!c) {
                break;
            }
        }
    }
    free(copy);
    check_rundir(dir);
}

/* ---------------------------------------------------------------------- */
/* Locks.                                                                  */

/* At most this many tries for a lock whose file is replaced under us
 * each time (an exiting daemon removes its pidfile between our open and
 * our lock): more than that means something is playing games. */
#define LOCK_TRIES 10

int
lock_file(const char *path, mode_t mode, int *fdp, long *holderp)
{
    *fdp = -1;
    *holderp = 0;
    for (int i = 0; i < LOCK_TRIES; i++) {
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                      mode);
        if (fd < 0) {
            return errno;
        }
        struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        if (fcntl(fd, F_SETLK, &lk)) {
            int error = errno;
            if (error == EACCES || error == EAGAIN) {
                struct flock q = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
                bool asked = !fcntl(fd, F_GETLK, &q);
                close(fd);
                if (asked && q.l_type == F_UNLCK) {
                    continue;   /* Let go between our two calls. */
                }
                /* A holder in another pid namespace shows as pid 0. */
                *holderp = asked ? (long) q.l_pid : 0;
                return EAGAIN;
            }
            close(fd);
            return error;
        }
        /* Locked: but is it still the file under that name? */
        struct stat fst, pst;
        if (!fstat(fd, &fst) && !lstat(path, &pst)
            && fst.st_dev == pst.st_dev && fst.st_ino == pst.st_ino) {
            *fdp = fd;
            return 0;
        }
        close(fd);
    }
    return EAGAIN;
}

/* ---------------------------------------------------------------------- */
/* The pidfile.                                                            */

static char *pidfile_path;
static int pidfile_fd = -1;
static pid_t pidfile_owner;     /* The process that wrote it. */

/* atexit(): a daemon that exits, even through fatal(), removes its
 * pidfile. */
static void
pidfile_atexit(void)
{
    pidfile_remove();
}

void
pidfile_create(const char *path)
{
    long holder;
    int fd;
    int error = lock_file(path, 0644, &fd, &holder);

    if (error == EAGAIN) {
        if (holder > 0) {
            fatal("--pidfile: %s is locked by pid %ld: another flowdpd is "
                  "running with this pidfile", path, holder);
        }
        fatal("--pidfile: %s is locked by another process", path);
    } else if (error == ELOOP) {
        fatal("--pidfile: %s: is a symbolic link (refused: the pidfile "
              "must be a file of its own)", path);
    } else if (error) {
        fatal("--pidfile: %s: %s", path, strerror(error));
    }

    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long) getpid());
    if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t) n, 0) != n) {
        fatal("--pidfile: %s: %s", path, strerror(errno));
    }
    pidfile_path = strdup(path);
    if (!pidfile_path) {
        fatal("out of memory");
    }
    pidfile_fd = fd;
    pidfile_owner = getpid();
    atexit(pidfile_atexit);
}

void
pidfile_remove(void)
{
    struct stat fst, pst;

    if (pidfile_fd < 0 || getpid() != pidfile_owner) {
        return;
    }
    /* Only the file we locked: if someone removed it and another daemon
     * made a new one under the name, that one is not ours to remove. */
    if (!fstat(pidfile_fd, &fst) && !lstat(pidfile_path, &pst)
        && fst.st_dev == pst.st_dev && fst.st_ino == pst.st_ino) {
        unlink(pidfile_path);
    }
    close(pidfile_fd);          /* Drops the lock, after the unlink. */
    pidfile_fd = -1;
    free(pidfile_path);
    pidfile_path = NULL;
}

/* ---------------------------------------------------------------------- */
/* --detach.                                                               */

int
detach_start(void)
{
    int fds[2];

    if (pipe(fds)) {
        fatal("--detach: pipe: %s", strerror(errno));
    }
    fflush(NULL);               /* Nothing buffered is written twice. */
    pid_t pid = fork();
    if (pid < 0) {
        fatal("--detach: fork: %s", strerror(errno));
    }
    if (pid > 0) {
        char c;
        close(fds[1]);
        _exit(read(fds[0], &c, 1) == 1 ? EXIT_SUCCESS : EXIT_FAILURE);
    }
    close(fds[0]);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    setsid();                   /* No controlling terminal's signals. */
    return fds[1];
}

void
detach_finish(int ready_fd)
{
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);

    if (null < 0) {
        vlog(L_WARN, "--detach: /dev/null: %s: keeping the standard "
             "streams", strerror(errno));
    } else {
        if (!log_stream) {
            /* Standard error is about to go; logs go to syslog. */
            openlog("flowdpd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
            log_to_syslog = true;
        }
        fflush(NULL);
        if (dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0
            || dup2(null, STDERR_FILENO) < 0) {
            vlog(L_WARN, "--detach: redirecting the standard streams: %s",
                 strerror(errno));
        }
        close(null);
    }
    /* The parent exits when it reads this byte; after it, nothing is
     * printed on the terminal any more. */
    if (write(ready_fd, "", 1) != 1) {
        vlog(L_WARN, "telling the parent we are ready: %s",
             strerror(errno));
    }
    close(ready_fd);
}
