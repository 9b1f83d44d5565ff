// SPDX-License-Identifier: GPL-2.0-only
/*
 * The wbthrottle command's side of the kernel: device-mapper through
 * libdevmapper, the target's reasons from the kernel log, and the lower
 * disk's own blk-wbt (switched off on create, restored on remove, the old
 * value kept in /run/wbthrottle/NAME).
 */
#include <errno.h>
#include <fcntl.h>
#include <libdevmapper.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "wbthrottle.h"

#define WBT_RUN_DIR "/run/wbthrottle"

/* libdevmapper's log levels (syslog's) and flags, not in its header. */
enum {
	DM_LOG_ERR = 3,
	DM_LOG_FLAGS = 128 | 256,	/* _LOG_STDERR, _LOG_ONCE */
};

static char dm_last_error[WBT_ERR_LEN];

/* libdevmapper's messages: keep the last error for when nothing better. */
__attribute__((format(printf, 5, 6)))
static void dm_log(int level, const char *file, int line, int dm_errno,
		   const char *fmt, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno;
	if ((level & ~DM_LOG_FLAGS) > DM_LOG_ERR)
		return;
	va_start(ap, fmt);
	vsnprintf(dm_last_error, sizeof(dm_last_error), fmt, ap);
	va_end(ap);
	if (getenv("WBTHROTTLE_DEBUG"))
		fprintf(stderr, "libdevmapper: %s\n", dm_last_error);
}

void wbt_dm_init(void)
{
	dm_log_with_errno_init(dm_log);
}

/* ---- the kernel's reason ------------------------------------------------ */

/* Open the kernel log at its end: what is read later is new. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* The last new "device-mapper: ... wbthrottle ..." line, if any. */
static bool kmsg_reason(int fd, char *buf, size_t len)
{
	char rec[8192], *msg, *nl;
	bool found = false;
	ssize_t n;

	if (fd < 0)
		return false;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = 0;
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		nl = strchr(++msg, '\n');
		if (nl)
			*nl = 0;
		if (strstr(msg, "device-mapper:") && strstr(msg, "wbthrottle")) {
			snprintf(buf, len, "%s", msg);
			found = true;
		}
	}
	return found;
}

/* Say why the kernel refused, in the target's words when it gave any. */
static void refused(const char *what, const char *name, int kfd)
{
	char why[1024];

	if (kmsg_reason(kfd, why, sizeof(why)))
		wbt_err("%s %s: the kernel refused: %s", what, name, why);
	else if (dm_last_error[0])
		wbt_err("%s %s: %s (the kernel log may say more: dmesg)",
			what, name, dm_last_error);
	else
		wbt_err("%s %s failed (see dmesg)", what, name);
}

/* ---- device-mapper ------------------------------------------------------- */

static struct dm_task *task(int type, const char *name)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt) {
		wbt_err("cannot talk to device-mapper (is dm-mod loaded? are you root?)");
		return NULL;
	}
	if (name && !dm_task_set_name(dmt, name)) {
		dm_task_destroy(dmt);
		return NULL;
	}
	return dmt;
}

/* Run a task that makes or removes nodes, with udev when it is there. */
static int run_udev(struct dm_task *dmt, const char *what, const char *name)
{
	uint32_t cookie = 0;
	int kfd = kmsg_open(), r = 0;

	dm_last_error[0] = 0;
	if (!dm_task_set_cookie(dmt, &cookie, 0) || !dm_task_run(dmt)) {
		refused(what, name, kfd);
		r = -1;
	}
	dm_udev_wait(cookie);
	if (kfd >= 0)
		close(kfd);
	return r;
}

/* 1 if NAME exists, 0 if not, -1 (said why) if device-mapper is not there. */
int wbt_dm_exists(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, name);
	struct dm_info info;
	int r = -1;

	if (!dmt)
		return -1;
	if (dm_task_run(dmt) && dm_task_get_info(dmt, &info))
		r = info.exists ? 1 : 0;
	else
		wbt_err("cannot talk to device-mapper (is dm-mod loaded? are you root?)");
	dm_task_destroy(dmt);
	return r;
}

int wbt_dm_create(const char *name, uint64_t sectors, const char *params)
{
	struct dm_task *dmt = task(DM_DEVICE_CREATE, name);
	int r;

	if (!dmt)
		return -1;
	r = -1;
	if (dm_task_add_target(dmt, 0, sectors, "wbthrottle", params))
		r = run_udev(dmt, "create", name);
	dm_task_destroy(dmt);
	return r;
}

int wbt_dm_remove(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_REMOVE, name);
	int r;

	if (!dmt)
		return -1;
	dm_task_retry_remove(dmt);
	r = run_udev(dmt, "remove", name);
	dm_task_destroy(dmt);
	return r;
}

int wbt_dm_message(const char *name, const char *msg)
{
	struct dm_task *dmt = task(DM_DEVICE_TARGET_MSG, name);
	int kfd, r = 0;

	if (!dmt)
		return -1;
	kfd = kmsg_open();
	dm_last_error[0] = 0;
	if (!dm_task_set_sector(dmt, 0) || !dm_task_set_message(dmt, msg) ||
	    !dm_task_run(dmt)) {
		refused("set", name, kfd);
		r = -1;
	}
	if (kfd >= 0)
		close(kfd);
	dm_task_destroy(dmt);
	return r;
}

/* Table or status of a one-target wbthrottle device. */
static int get_params(int type, const char *name, struct wbt_dev *d)
{
	struct dm_task *dmt = task(type, name);
	char *ttype = NULL, *params = NULL;
	struct dm_info info;
	int r = -1;

	if (!dmt)
		return -1;
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &info) ||
	    !info.exists) {
		wbt_err("%s: no such device", name);
		goto out;
	}
	dm_get_next_target(dmt, NULL, &d->start, &d->sectors, &ttype, &params);
	if (!ttype || strcmp(ttype, "wbthrottle")) {
		wbt_err("%s is not a wbthrottle device", name);
		goto out;
	}
	d->major = info.major;
	d->minor = info.minor;
	if (type == DM_DEVICE_TABLE)
		d->table = strdup(params ? params : "");
	else
		d->status = strdup(params ? params : "");
	r = (type == DM_DEVICE_TABLE ? d->table : d->status) ? 0 : -1;
out:
	dm_task_destroy(dmt);
	return r;
}

int wbt_dev_load(const char *name, struct wbt_dev *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (get_params(DM_DEVICE_TABLE, name, d) ||
	    get_params(DM_DEVICE_STATUS, name, d))
		return -1;
	d->nf = wbt_status_parse(d->status, d->f, WBT_MAX_FIELDS);
	snprintf(d->lower, sizeof(d->lower), "%.*s",
		 (int)strcspn(d->table, " "), d->table);
	return 0;
}

void wbt_dev_free(struct wbt_dev *d)
{
	free(d->table);
	free(d->status);
	d->table = NULL;
	d->status = NULL;
}

/* Is NAME's only target a wbthrottle one? (quietly) */
static bool is_wbt(const char *name)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_TABLE);
	char *ttype = NULL, *params;
	uint64_t start, len;
	bool r = false;

	if (!dmt)
		return false;
	if (dm_task_set_name(dmt, name) && dm_task_run(dmt)) {
		dm_get_next_target(dmt, NULL, &start, &len, &ttype, &params);
		r = ttype && !strcmp(ttype, "wbthrottle");
	}
	dm_task_destroy(dmt);
	return r;
}

/* The names of all wbthrottle devices; NULL-terminated, free with free(). */
char **wbt_dm_list(void)
{
	struct dm_task *dmt = task(DM_DEVICE_LIST, NULL);
	struct dm_names *n;
	char **names = NULL, **t;
	size_t nr = 0;
	unsigned int next = 0;

	if (!dmt)
		return NULL;
	if (!dm_task_run(dmt))
		goto out;
	n = dm_task_get_names(dmt);
	if (!n)
		goto out;
	names = calloc(1, sizeof(*names));
	if (!n->dev)
		goto out;
	do {
		n = (struct dm_names *)((char *)n + next);
		next = n->next;
		if (!names || !is_wbt(n->name))
			continue;
		t = realloc(names, (nr + 2) * sizeof(*names));
		if (!t)
			break;
		names = t;
		names[nr++] = strdup(n->name);
		names[nr] = NULL;
	} while (next);
out:
	dm_task_destroy(dmt);
	if (!names)
		wbt_err("cannot list device-mapper devices");
	return names;
}

/* ---- the lower device ---------------------------------------------------- */

/*
 * A wbthrottle device over a wbthrottle device is a mistake, most likely
 * UUID= of a filesystem that is now seen on both the disk and the device.
 */
static int lower_not_wbt(const char *path, dev_t rdev)
{
	char file[64], name[WBT_NAME_MAX + 2] = "";
	FILE *f;

	snprintf(file, sizeof(file), "/sys/dev/block/%u:%u/dm/name",
		 major(rdev), minor(rdev));
	f = fopen(file, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%128s", name) != 1)
		name[0] = 0;
	fclose(f);
	if (!*name || !is_wbt(name))
		return 0;
	wbt_err("%s is the wbthrottle device %s itself; name the disk below it (by /dev/disk/by-id/, not by the filesystem's UUID)",
		path, name);
	return -1;
}

/* Size in sectors of a block device; fails in words. */
int wbt_lower_size(const char *path, uint64_t *sectors, dev_t *rdev)
{
	uint64_t bytes;
	struct stat st;
	int fd;

	if (stat(path, &st)) {
		wbt_err("%s: %m", path);
		return -1;
	}
	if (!S_ISBLK(st.st_mode)) {
		wbt_err("%s is not a block device", path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes)) {
		wbt_err("%s: cannot read its size: %m", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	*sectors = bytes >> 9;
	*rdev = st.st_rdev;
	return lower_not_wbt(path, st.st_rdev);
}

/* The wbt_lat_usec file of the disk under rdev (a partition's parent). */
static int wbt_lat_file(dev_t rdev, char *buf, size_t len)
{
	char link[64], real[PATH_MAX], probe[PATH_MAX + 16];

	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(rdev),
		 minor(rdev));
	if (!realpath(link, real))
		return -1;
	snprintf(probe, sizeof(probe), "%s/partition", real);
	if (!access(probe, F_OK))
		*strrchr(real, '/') = 0;
	if ((size_t)snprintf(buf, len, "%s/queue/wbt_lat_usec", real) >= len)
		return -1;
	return access(buf, F_OK);
}

static int read_ulong(const char *path, unsigned long *v)
{
	FILE *f = fopen(path, "r");
	int r;

	if (!f)
		return -1;
	r = fscanf(f, "%lu", v) == 1 ? 0 : -1;
	fclose(f);
	return r;
}

static int write_ulong(const char *path, unsigned long v)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "%lu\n", v);
	return fclose(f);
}

/*
 * Switch off the lower disk's blk-wbt so that two throttles do not stack,
 * and remember its value for wbt_lower_restore(). A failure is a warning.
 */
void wbt_lower_wbt_off(const char *name, dev_t rdev)
{
	char file[PATH_MAX], state[PATH_MAX];
	unsigned long lat;
	FILE *f;

	if (wbt_lat_file(rdev, file, sizeof(file)) ||
	    read_ulong(file, &lat) || !lat)
		return;
	snprintf(state, sizeof(state), WBT_RUN_DIR "/%s", name);
	mkdir(WBT_RUN_DIR, 0755);
	f = fopen(state, "w");
	if (!f || fprintf(f, "%s %lu\n", file, lat) < 0 || fclose(f)) {
		wbt_warn("cannot save blk-wbt state in %s: %m; leaving it on",
			 state);
		return;
	}
	if (write_ulong(file, 0)) {
		wbt_warn("cannot switch off blk-wbt (%s): %m", file);
		unlink(state);
		return;
	}
	printf("%s: switched off the lower disk's blk-wbt (%s was %lu; restored on remove)\n",
	       name, file, lat);
}

/* Another wbthrottle device over the disk whose wbt_lat_usec is file. */
static bool disk_shared(const char *name, const char *file, char *other,
			size_t len)
{
	char **names = wbt_dm_list(), this[PATH_MAX];
	unsigned int maj, min;
	struct wbt_dev d;
	bool r = false;
	int i;

	for (i = 0; names && names[i]; i++) {
		if (!r && strcmp(names[i], name) && !wbt_dev_load(names[i], &d)) {
			if (sscanf(d.table, "%u:%u", &maj, &min) == 2 &&
			    !wbt_lat_file(makedev(maj, min), this, sizeof(this)) &&
			    !strcmp(this, file)) {
				snprintf(other, len, "%s", names[i]);
				r = true;
			}
			wbt_dev_free(&d);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

/*
 * Put back the value create switched off, unless another wbthrottle device
 * still sits on the same disk: then that one inherits the duty.
 */
void wbt_lower_wbt_restore(const char *name)
{
	char state[PATH_MAX], file[PATH_MAX], other[WBT_NAME_MAX + 1];
	char to[PATH_MAX];
	unsigned long lat;
	FILE *f;

	snprintf(state, sizeof(state), WBT_RUN_DIR "/%s", name);
	f = fopen(state, "r");
	if (!f)
		return;
	if (fscanf(f, "%4095s %lu", file, &lat) != 2) {
		fclose(f);
		unlink(state);
		return;
	}
	fclose(f);
	if (disk_shared(name, file, other, sizeof(other))) {
		snprintf(to, sizeof(to), WBT_RUN_DIR "/%s", other);
		if (!rename(state, to)) {
			printf("%s: the lower disk's blk-wbt stays off: %s is on it too\n",
			       name, other);
			return;
		}
	}
	if (write_ulong(file, lat))
		wbt_warn("cannot restore %s to %lu: %m", file, lat);
	else
		printf("%s: restored the lower disk's blk-wbt (%s = %lu)\n",
		       name, file, lat);
	unlink(state);
}
