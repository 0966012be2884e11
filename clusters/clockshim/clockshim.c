/*
 * clockshim: an LD_PRELOAD library that shifts a process's wall clock.
 *
 * It adds an offset to CLOCK_REALTIME and CLOCK_REALTIME_COARSE in
 * clock_gettime, to gettimeofday, to time and to timespec_get. Every other
 * clock (CLOCK_MONOTONIC, CLOCK_BOOTTIME, ...) is passed through untouched.
 *
 * The offset is a native-endian int64 of nanoseconds at byte 0 of the file
 * named by the environment variable LOCKCHECK_CLOCK_FILE. The file is
 * mmap'd read-only and shared on first use, so a write by another process
 * (lockcheck writes the 8 bytes in place, never truncating) takes effect at
 * the next call. A missing or short file reads as offset 0 and is looked
 * for again at most once a second.
 *
 * Why not libfaketime: Debian's libfaketime resolves the real functions
 * with dlsym, which can call malloc; jemalloc-linked redis-server calls
 * clock_gettime while initialising its allocator, and the two deadlock.
 * This shim calls the kernel directly (syscall(SYS_clock_gettime, ...)),
 * and uses no malloc, no dlsym and no stdio, so it cannot recurse.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The mapped offset, or NULL while the file has not been found. */
static const volatile int64_t *offset_map;
/* The raw real-time second of the last failed attempt to map the file. */
static int64_t last_try = -1;

static int raw_clock_gettime(clockid_t id, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, id, ts);
}

/* try_map maps the offset file; it returns NULL when it cannot. */
static const volatile int64_t *try_map(void)
{
	const char *path = getenv("LOCKCHECK_CLOCK_FILE");
	if (path == NULL || path[0] == '\0')
		return NULL;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *p = MAP_FAILED;
	if (syscall(SYS_fstat, fd, &st) == 0 && st.st_size >= (off_t)sizeof(int64_t))
		p = (void *)syscall(SYS_mmap, NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
	syscall(SYS_close, fd);
	if (p == MAP_FAILED)
		return NULL;
	return (const volatile int64_t *)p;
}

/* offset returns the current offset in nanoseconds (0 without a file). */
static int64_t offset(void)
{
	const volatile int64_t *m = __atomic_load_n(&offset_map, __ATOMIC_ACQUIRE);
	if (m != NULL)
		return *m;
	struct timespec now;
	if (raw_clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 0;
	int64_t last = __atomic_load_n(&last_try, __ATOMIC_RELAXED);
	if (last == (int64_t)now.tv_sec)
		return 0;
	__atomic_store_n(&last_try, (int64_t)now.tv_sec, __ATOMIC_RELAXED);
	const volatile int64_t *p = try_map();
	if (p == NULL)
		return 0;
	const volatile int64_t *expected = NULL;
	if (!__atomic_compare_exchange_n(&offset_map, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* Another thread mapped it first. */
		syscall(SYS_munmap, (void *)p, sizeof(int64_t));
		p = expected;
	}
	return *p;
}

static void shift(struct timespec *ts)
{
	int64_t off = offset();
	if (off == 0)
		return;
	int64_t ns = (int64_t)ts->tv_nsec + off % 1000000000LL;
	int64_t sec = (int64_t)ts->tv_sec + off / 1000000000LL;
	if (ns < 0) {
		ns += 1000000000LL;
		sec--;
	} else if (ns >= 1000000000LL) {
		ns -= 1000000000LL;
		sec++;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)ns;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int rc = raw_clock_gettime(id, ts);
	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		shift(ts);
	return rc;
}

/* POSIX allows a null tv, which glibc's prototype declares nonnull. */
#pragma GCC diagnostic ignored "-Wnonnull-compare"
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	if (tz != NULL) {
		/* Obsolete; the kernel reports no zone, so glibc gives zeros. */
		struct timezone *z = tz;
		z->tz_minuteswest = 0;
		z->tz_dsttime = 0;
	}
	if (tv == NULL)
		return 0;
	struct timespec ts;
	int rc = raw_clock_gettime(CLOCK_REALTIME, &ts);
	if (rc != 0)
		return rc;
	shift(&ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *out)
{
	struct timespec ts;
	if (raw_clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return (time_t)-1;
	shift(&ts);
	if (out != NULL)
		*out = ts.tv_sec;
	return ts.tv_sec;
}

int timespec_get(struct timespec *ts, int base)
{
	if (base != TIME_UTC || raw_clock_gettime(CLOCK_REALTIME, ts) != 0)
		return 0;
	shift(ts);
	return base;
}
