// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers for the uprobes selftests: tracefs access, ELF symbol and
 * SDT note parsing, /proc/PID/{mem,maps} access and helper processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/elf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uprobe_util.h"

/* ---------------------------------------------------------------------- */
/* generic file helpers                                                    */

char *ut_read_file(const char *path, size_t *lenp)
{
	size_t cap = 65536, len = 0;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf)
		goto fail;
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *nbuf = realloc(buf, cap * 2);

			if (!nbuf)
				goto fail;
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

int ut_write_file(const char *path, const char *buf, bool append)
{
	size_t len = strlen(buf);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

bool ut_file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * Is @b, read from @addr of process @pid, a jmp rel32 into one of that
 * process's stub areas ([uprobes-stubs]): a jump site of ours (x86-64)?
 */
static bool is_jump_site(pid_t pid, uintptr_t addr, const uint8_t *b)
{
#ifdef __x86_64__
	unsigned long lo, hi, to;
	char path[64], line[512];
	bool found = false;
	int32_t rel;
	FILE *f;

	if (b[0] != 0xe9)
		return false;
	memcpy(&rel, b + 1, sizeof(rel));
	to = addr + 5 + rel;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "[uprobes-stubs]") &&
			sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
			to >= lo && to < hi;
	fclose(f);
	return found;
#else
	return false;
#endif
}

bool ut_is_bp_in(pid_t pid, uint64_t addr, const void *bytes)
{
	return !memcmp(bytes, UT_BP, UT_BP_SIZE) ||
	       is_jump_site(pid, addr, bytes);
}

bool ut_is_bp(const void *p)
{
	return ut_is_bp_in(getpid(), (uintptr_t)p, p);
}

int ut_bool_param(const char *path)
{
	char *v = ut_read_file(path, NULL);
	int on;

	if (!v)
		return -1;
	on = v[0] == 'Y' || v[0] == '1';
	free(v);
	return on;
}

/* Set the bool parameter at @path; its old value, -1 if there is none. */
static int set_bool_param(const char *path, bool on)
{
	int was = ut_bool_param(path);

	if (was < 0 || ut_write_file(path, on ? "1" : "0", false))
		return -1;
	return was;
}

int ut_jump_sites(bool on)
{
	return set_bool_param(UT_JUMP_SITES, on);
}

int ut_boost(bool on)
{
	return set_bool_param(UT_BOOST, on);
}

int ut_syscall_returns(bool on)
{
	return set_bool_param(UT_SYSCALL_RETURNS, on);
}

int ut_emulate(bool on)
{
	return set_bool_param(UT_EMULATE, on);
}

int ut_tracee_pc(pid_t pid, uintptr_t *pc, uintptr_t set)
{
#if defined(__x86_64__)
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, pid, 0, &regs))
		return -1;
	*pc = regs.rip;
	regs.rip = set;
	if (set && ptrace(PTRACE_SETREGS, pid, 0, &regs))
		return -1;
#elif defined(__aarch64__)
	struct user_regs_struct regs;
	struct iovec iov = { .iov_base = &regs, .iov_len = sizeof(regs) };

	if (ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &iov))
		return -1;
	*pc = regs.pc;
	regs.pc = set;
	if (set && ptrace(PTRACE_SETREGSET, pid, NT_PRSTATUS, &iov))
		return -1;
#else
	errno = EOPNOTSUPP;
	return -1;
#endif
	return 0;
}

/* ---------------------------------------------------------------------- */
/* tracefs                                                                 */

int ut_stats_counts(const char *grp, const char *ev, unsigned long long v[5])
{
	char *buf, *line, *save = NULL, name[256], got[256];
	unsigned long long c[5];
	int ret = -1;

	buf = ut_read_file(UT_TRACEFS "/uprobe_stats", NULL);
	if (!buf)
		return -1;
	snprintf(name, sizeof(name), "%s/%s", grp, ev);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%255s %*s %llu %llu %llu %llu %llu", got,
			   &c[0], &c[1], &c[2], &c[3], &c[4]) == 6 &&
		    !strcmp(got, name)) {
			memcpy(v, c, sizeof(c));
			ret = 0;
		}
	}
	free(buf);
	return ret;
}

bool ut_tracefs_ok(void)
{
	return ut_file_exists(UT_TRACEFS "/uprobe_events");
}

static int vwrite_def(const char *file, const char *fmt, va_list ap)
{
	char buf[4096];
	int n;

	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	if (n < 0 || n >= (int)sizeof(buf) - 1)
		return -E2BIG;
	buf[n++] = '\n';
	buf[n] = '\0';
	return ut_write_file(file, buf, true);
}

int ut_probe_add(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vwrite_def(UT_TRACEFS "/uprobe_events", fmt, ap);
	va_end(ap);
	return ret;
}

int ut_dynevent_add(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vwrite_def(UT_TRACEFS "/dynamic_events", fmt, ap);
	va_end(ap);
	return ret;
}

int ut_probe_del(const char *grp, const char *ev)
{
	return ut_probe_add("-:%s/%s", grp, ev);
}

int ut_event_enable(const char *grp, const char *ev, bool on)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), UT_TRACEFS "/events/%s/%s/enable",
		 grp, ev);
	return ut_write_file(path, on ? "1\n" : "0\n", false);
}

int ut_event_enabled(const char *grp, const char *ev)
{
	char path[PATH_MAX], *buf;
	int ret = -1;

	snprintf(path, sizeof(path), UT_TRACEFS "/events/%s/%s/enable",
		 grp, ev);
	buf = ut_read_file(path, NULL);
	if (!buf)
		return -1;
	if (!strcmp(buf, "0\n"))
		ret = 0;
	else if (!strcmp(buf, "1\n"))
		ret = 1;
	free(buf);
	return ret;
}

bool ut_event_dir_exists(const char *grp, const char *ev)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), UT_TRACEFS "/events/%s/%s", grp, ev);
	return ut_file_exists(path);
}

bool ut_group_dir_exists(const char *grp)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), UT_TRACEFS "/events/%s", grp);
	return ut_file_exists(path);
}

/*
 * Count the uprobe_events lines "p:GRP/EV ..." of group @grp (and event
 * @ev_only unless NULL); with @cleanup, disable and remove each of them.
 */
static int scan_events(const char *grp, const char *ev_only, bool cleanup)
{
	char *buf, *line, *save = NULL;
	size_t glen = strlen(grp);
	int count = 0;

	buf = ut_read_file(UT_TRACEFS "/uprobe_events", NULL);
	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char ev[256], *sp;

		if (strlen(line) < 2 || line[1] != ':')
			continue;
		if (strncmp(line + 2, grp, glen) || line[2 + glen] != '/')
			continue;
		snprintf(ev, sizeof(ev), "%s", line + 3 + glen);
		sp = strchr(ev, ' ');
		if (sp)
			*sp = '\0';
		if (ev_only && strcmp(ev, ev_only))
			continue;
		count++;
		if (cleanup) {
			ut_event_enable(grp, ev, false);
			ut_probe_del(grp, ev);
		}
	}
	free(buf);
	return count;
}

bool ut_uprobe_events_has(const char *grp, const char *ev)
{
	return scan_events(grp, ev, false) > 0;
}

int ut_group_cleanup(const char *grp)
{
	if (!ut_tracefs_ok())
		return 0;
	return scan_events(grp, NULL, true);
}

int ut_trace_clear(void)
{
	return ut_write_file(UT_TRACEFS "/trace", "", false);
}

/*
 * A trace line looks like
 *   "     comm-1234    [001] d....   12.345678: EV: (0x401136) a=0x1"
 * The pid is the number right before the blanks preceding "[CPU]".
 */
static pid_t line_pid(const char *line)
{
	const char *br = strchr(line, '[');
	const char *p;

	if (!br || br == line)
		return -1;
	p = br - 1;
	while (p > line && *p == ' ')
		p--;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == line || p[-1] != '-')
		return -1;
	return (pid_t)atoi(p);
}

int ut_trace_records(const char *ev, pid_t pid, char ***recs)
{
	char *buf, *line, *save = NULL, needle[300];
	char **out = NULL;
	int n = 0, cap = 0;

	if (recs)
		*recs = NULL;
	buf = ut_read_file(UT_TRACEFS "/trace", NULL);
	if (!buf)
		return -1;
	snprintf(needle, sizeof(needle), " %s: ", ev);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *hit;

		if (line[0] == '#')
			continue;
		hit = strstr(line, needle);
		if (!hit)
			continue;
		if (pid > 0 && line_pid(line) != pid)
			continue;
		if (recs) {
			if (n == cap) {
				char **no;

				cap = cap ? cap * 2 : 16;
				no = realloc(out, cap * sizeof(*out));
				if (!no)
					break;
				out = no;
			}
			out[n] = strdup(hit + strlen(needle));
		}
		n++;
	}
	free(buf);
	if (recs)
		*recs = out;
	return n;
}

int ut_trace_count(const char *ev, pid_t pid)
{
	return ut_trace_records(ev, pid, NULL);
}

void ut_free_records(char **recs, int n)
{
	int i;

	if (!recs)
		return;
	for (i = 0; i < n; i++)
		free(recs[i]);
	free(recs);
}

static const char *find_arg(const char *rec, const char *name)
{
	size_t nlen = strlen(name);
	const char *p = rec;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == rec || p[-1] == ' ') && p[nlen] == '=')
			return p + nlen + 1;
		p += nlen;
	}
	return NULL;
}

int ut_rec_u64(const char *rec, const char *name, uint64_t *val)
{
	const char *v = find_arg(rec, name);
	char *end;

	if (!v)
		return -1;
	errno = 0;
	if (*v == '-')
		*val = (uint64_t)strtoll(v, &end, 0);
	else
		*val = strtoull(v, &end, 0);
	if (errno || end == v || (*end != ' ' && *end != '\0'))
		return -1;
	return 0;
}

int ut_rec_str(const char *rec, const char *name, char *buf, size_t size)
{
	const char *v = find_arg(rec, name), *end;
	size_t len;

	if (!v || *v != '"')
		return -1;
	v++;
	end = strchr(v, '"');
	if (!end)
		return -1;
	len = end - v;
	if (len >= size)
		return -1;
	memcpy(buf, v, len);
	buf[len] = '\0';
	return 0;
}

int ut_rec_ip(const char *rec, uint64_t *ip, uint64_t *func)
{
	char *end;

	if (rec[0] != '(')
		return -1;
	*ip = strtoull(rec + 1, &end, 16);
	if (func) {
		*func = 0;
		if (!strncmp(end, " <- ", 4))
			*func = strtoull(end + 4, &end, 16);
	}
	return *end == ')' ? 0 : -1;
}

int ut_error_log_clear(void)
{
	return ut_write_file(UT_TRACEFS "/error_log", "", false);
}

char *ut_error_log(void)
{
	return ut_read_file(UT_TRACEFS "/error_log", NULL);
}

long ut_profile_hits_at(const char *path, const char *ev)
{
	char *buf, *line, *save = NULL;
	long hits = -1;

	buf = ut_read_file(UT_TRACEFS "/uprobe_profile", NULL);
	if (!buf)
		return -1;
	/* "  FILE EVENT HITS" */
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char file[PATH_MAX], name[256];
		long n;

		if (sscanf(line, " %4095s %255s %ld", file, name, &n) != 3)
			continue;
		if ((!path || !strcmp(file, path)) && !strcmp(name, ev)) {
			hits = n;
			break;
		}
	}
	free(buf);
	return hits;
}

long ut_profile_hits(const char *ev)
{
	return ut_profile_hits_at(NULL, ev);
}

int ut_define_at(const char *grp, const char *ev, const char *path,
		 uint64_t off, uint64_t ref)
{
	char refs[32] = "";

	if (ref)
		snprintf(refs, sizeof(refs), "(0x%lx)", (unsigned long)ref);
	return ut_probe_add("p:%s/%s %s:0x%lx%s", grp, ev, path,
			    (unsigned long)off, refs);
}

int ut_probe_at(const char *grp, const char *ev, const char *path,
		uint64_t off, uint64_t ref)
{
	int ret = ut_define_at(grp, ev, path, off, ref);

	return ret ? ret : ut_event_enable(grp, ev, true);
}

/* ---------------------------------------------------------------------- */
/* perf                                                                    */

long ut_pmu_type(void)
{
	char *buf = ut_read_file(UT_UPROBE_PMU "/type", NULL);
	long v = -1;

	if (buf)
		v = atol(buf);
	free(buf);
	return v;
}

int ut_pmu_format_bit(const char *name, int *hi)
{
	char path[PATH_MAX], *buf;
	int lo = -1, h = -1, n;

	snprintf(path, sizeof(path), UT_UPROBE_PMU "/format/%s", name);
	buf = ut_read_file(path, NULL);
	if (!buf)
		return -1;
	n = sscanf(buf, "config:%d-%d", &lo, &h);
	free(buf);
	if (n < 1)
		return -1;
	if (hi)
		*hi = n == 2 ? h : lo;
	return lo;
}

int ut_uprobe_attr(struct perf_event_attr *attr, const char *path,
		   uint64_t offset, bool ret, uint64_t ref_ctr)
{
	long type = ut_pmu_type();
	int bit;

	if (type < 0)
		return -1;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config1 = (uint64_t)(uintptr_t)path;
	attr->config2 = offset;
	if (ret) {
		bit = ut_pmu_format_bit("retprobe", NULL);
		if (bit < 0)
			return -1;
		attr->config |= 1ULL << bit;
	}
	if (ref_ctr) {
		bit = ut_pmu_format_bit("ref_ctr_offset", NULL);
		if (bit < 0)
			return -1;
		attr->config |= ref_ctr << bit;
	}
	return 0;
}

int ut_perf_open(struct perf_event_attr *attr, pid_t pid)
{
	int fd = syscall(__NR_perf_event_open, attr, pid, -1, -1,
			 PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int ut_uprobe_perf_open(const char *path, uint64_t offset, uint64_t ref_ctr,
			pid_t pid)
{
	struct perf_event_attr attr;

	if (ut_uprobe_attr(&attr, path, offset, false, ref_ctr))
		return -ENOENT;
	return ut_perf_open(&attr, pid);
}

/* ---------------------------------------------------------------------- */
/* ELF                                                                     */

struct elf_file {
	uint8_t *data;
	size_t size;
	struct elf64_hdr *eh;
	struct elf64_shdr *sh;
	struct elf64_phdr *ph;
};

static int elf_open(const char *path, struct elf_file *ef)
{
	struct stat st;
	int fd;

	memset(ef, 0, sizeof(*ef));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(struct elf64_hdr)) {
		close(fd);
		return -1;
	}
	ef->size = st.st_size;
	ef->data = mmap(NULL, ef->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (ef->data == MAP_FAILED)
		return -1;
	ef->eh = (struct elf64_hdr *)ef->data;
	if (memcmp(ef->eh->e_ident, ELFMAG, SELFMAG) ||
	    ef->eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    ef->eh->e_shoff + (uint64_t)ef->eh->e_shnum * sizeof(struct elf64_shdr) > ef->size ||
	    ef->eh->e_phoff + (uint64_t)ef->eh->e_phnum * sizeof(struct elf64_phdr) > ef->size) {
		munmap(ef->data, ef->size);
		return -1;
	}
	ef->sh = (struct elf64_shdr *)(ef->data + ef->eh->e_shoff);
	ef->ph = (struct elf64_phdr *)(ef->data + ef->eh->e_phoff);
	return 0;
}

static void elf_close(struct elf_file *ef)
{
	munmap(ef->data, ef->size);
}

static const char *elf_secname(struct elf_file *ef, struct elf64_shdr *s)
{
	struct elf64_shdr *strs = &ef->sh[ef->eh->e_shstrndx];

	return (const char *)ef->data + strs->sh_offset + s->sh_name;
}

static struct elf64_shdr *elf_section(struct elf_file *ef, const char *name)
{
	int i;

	for (i = 0; i < ef->eh->e_shnum; i++)
		if (!strcmp(elf_secname(ef, &ef->sh[i]), name))
			return &ef->sh[i];
	return NULL;
}

static int64_t elf_v2o(struct elf_file *ef, uint64_t vaddr)
{
	int i;

	for (i = 0; i < ef->eh->e_phnum; i++) {
		struct elf64_phdr *p = &ef->ph[i];

		if (p->p_type != PT_LOAD)
			continue;
		if (vaddr >= p->p_vaddr && vaddr < p->p_vaddr + p->p_filesz)
			return vaddr - p->p_vaddr + p->p_offset;
	}
	return -1;
}

static int64_t elf_sym(struct elf_file *ef, const char *sym)
{
	static const char * const tabs[] = { ".symtab", ".dynsym" };
	unsigned int t;

	for (t = 0; t < 2; t++) {
		struct elf64_shdr *s = elf_section(ef, tabs[t]);
		struct elf64_sym *syms;
		const char *strs;
		size_t i, n;

		if (!s || s->sh_link >= ef->eh->e_shnum)
			continue;
		syms = (struct elf64_sym *)(ef->data + s->sh_offset);
		strs = (const char *)ef->data + ef->sh[s->sh_link].sh_offset;
		n = s->sh_size / sizeof(struct elf64_sym);
		for (i = 0; i < n; i++) {
			if (syms[i].st_shndx == SHN_UNDEF)
				continue;
			if (!strcmp(strs + syms[i].st_name, sym))
				return syms[i].st_value;
		}
	}
	return -1;
}

/*
 * ELF32 files (the i686 programs that 64-bit x86 kernels run as compat
 * tasks): the same lookups, for ut_elf_*() and ut_sdt_notes() to fall
 * back on when elf_open() finds no ELF64 file.
 */
struct elf32_file {
	uint8_t *data;
	size_t size;
	struct elf32_hdr *eh;
	struct elf32_shdr *sh;
	struct elf32_phdr *ph;
};

static int elf32_open(const char *path, struct elf32_file *ef)
{
	struct stat st;
	int fd;

	memset(ef, 0, sizeof(*ef));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(struct elf32_hdr)) {
		close(fd);
		return -1;
	}
	ef->size = st.st_size;
	ef->data = mmap(NULL, ef->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (ef->data == MAP_FAILED)
		return -1;
	ef->eh = (struct elf32_hdr *)ef->data;
	if (memcmp(ef->eh->e_ident, ELFMAG, SELFMAG) ||
	    ef->eh->e_ident[EI_CLASS] != ELFCLASS32 ||
	    ef->eh->e_shstrndx >= ef->eh->e_shnum ||
	    ef->eh->e_shoff + (uint64_t)ef->eh->e_shnum * sizeof(struct elf32_shdr) > ef->size ||
	    ef->eh->e_phoff + (uint64_t)ef->eh->e_phnum * sizeof(struct elf32_phdr) > ef->size) {
		munmap(ef->data, ef->size);
		return -1;
	}
	ef->sh = (struct elf32_shdr *)(ef->data + ef->eh->e_shoff);
	ef->ph = (struct elf32_phdr *)(ef->data + ef->eh->e_phoff);
	return 0;
}

static struct elf32_shdr *elf32_section(struct elf32_file *ef,
					const char *name)
{
	const char *strs = (const char *)ef->data +
			   ef->sh[ef->eh->e_shstrndx].sh_offset;
	int i;

	for (i = 0; i < ef->eh->e_shnum; i++)
		if (!strcmp(strs + ef->sh[i].sh_name, name))
			return &ef->sh[i];
	return NULL;
}

static int64_t elf32_v2o(struct elf32_file *ef, uint64_t vaddr)
{
	int i;

	for (i = 0; i < ef->eh->e_phnum; i++) {
		struct elf32_phdr *p = &ef->ph[i];

		if (p->p_type != PT_LOAD)
			continue;
		if (vaddr >= p->p_vaddr && vaddr < (uint64_t)p->p_vaddr + p->p_filesz)
			return vaddr - p->p_vaddr + p->p_offset;
	}
	return -1;
}

/* Symbol @sym's st_value (its file offset with @foff), or -1. */
static int64_t elf32_sym_lookup(const char *path, const char *sym, bool foff)
{
	static const char * const tabs[] = { ".symtab", ".dynsym" };
	struct elf32_file ef;
	int64_t v = -1;
	unsigned int t;

	if (elf32_open(path, &ef))
		return -1;
	for (t = 0; t < 2 && v < 0; t++) {
		struct elf32_shdr *s = elf32_section(&ef, tabs[t]);
		struct elf32_sym *syms;
		const char *strs;
		size_t i, n;

		if (!s || s->sh_link >= ef.eh->e_shnum)
			continue;
		syms = (struct elf32_sym *)(ef.data + s->sh_offset);
		strs = (const char *)ef.data + ef.sh[s->sh_link].sh_offset;
		n = s->sh_size / sizeof(struct elf32_sym);
		for (i = 0; i < n; i++) {
			if (syms[i].st_shndx != SHN_UNDEF &&
			    !strcmp(strs + syms[i].st_name, sym)) {
				v = syms[i].st_value;
				break;
			}
		}
	}
	if (v >= 0 && foff)
		v = elf32_v2o(&ef, v);
	munmap(ef.data, ef.size);
	return v;
}

static int64_t elf32_vaddr_to_offset(const char *path, uint64_t vaddr)
{
	struct elf32_file ef;
	int64_t v;

	if (elf32_open(path, &ef))
		return -1;
	v = elf32_v2o(&ef, vaddr);
	munmap(ef.data, ef.size);
	return v;
}

/* ut_sdt_notes() of an ELF32 file: its notes hold 4-byte addresses. */
static int elf32_sdt_notes(const char *path, struct ut_sdt_note *notes,
			   int max)
{
	struct elf32_shdr *ns, *bs;
	struct elf32_file ef;
	size_t pos, end;
	int n = 0;

	if (elf32_open(path, &ef))
		return -1;
	ns = elf32_section(&ef, ".note.stapsdt");
	bs = elf32_section(&ef, ".stapsdt.base");
	if (!ns) {
		munmap(ef.data, ef.size);
		return 0;
	}
	pos = ns->sh_offset;
	end = (size_t)ns->sh_offset + ns->sh_size;
	while (pos + sizeof(struct elf32_note) <= end && n < max) {
		struct elf32_note *nh = (struct elf32_note *)(ef.data + pos);
		const char *name = (const char *)(nh + 1);
		struct ut_sdt_note *sn = &notes[n];
		const uint8_t *desc;
		uint32_t addr[3];
		const char *s;

		desc = (const uint8_t *)name + ((nh->n_namesz + 3) & ~3u);
		pos = (desc - ef.data) + ((nh->n_descsz + 3) & ~3u);
		if (pos > end)
			break;
		if (nh->n_type != 3 || nh->n_namesz != 8 ||
		    strcmp(name, "stapsdt") || nh->n_descsz < 3 * 4 + 3)
			continue;
		memcpy(addr, desc, sizeof(addr));
		memset(sn, 0, sizeof(*sn));
		s = (const char *)desc + sizeof(addr);
		snprintf(sn->provider, sizeof(sn->provider), "%s", s);
		s += strlen(s) + 1;
		snprintf(sn->name, sizeof(sn->name), "%s", s);
		s += strlen(s) + 1;
		snprintf(sn->args, sizeof(sn->args), "%s", s);
		sn->pc = addr[0];
		sn->sem = addr[2];
		if (bs) {
			sn->pc = (uint32_t)(sn->pc + bs->sh_addr - addr[1]);
			if (sn->sem)
				sn->sem = (uint32_t)(sn->sem + bs->sh_addr - addr[1]);
		}
		sn->pc_off = elf32_v2o(&ef, sn->pc);
		sn->sem_off = sn->sem ? (uint64_t)elf32_v2o(&ef, sn->sem) : 0;
		n++;
	}
	munmap(ef.data, ef.size);
	return n;
}

int64_t ut_elf_sym_vaddr(const char *path, const char *sym)
{
	struct elf_file ef;
	int64_t v;

	if (elf_open(path, &ef))
		return elf32_sym_lookup(path, sym, false);
	v = elf_sym(&ef, sym);
	elf_close(&ef);
	return v;
}

int64_t ut_elf_sym_offset(const char *path, const char *sym)
{
	struct elf_file ef;
	int64_t v;

	if (elf_open(path, &ef))
		return elf32_sym_lookup(path, sym, true);
	v = elf_sym(&ef, sym);
	if (v >= 0)
		v = elf_v2o(&ef, v);
	elf_close(&ef);
	return v;
}

int64_t ut_elf_vaddr_to_offset(const char *path, uint64_t vaddr)
{
	struct elf_file ef;
	int64_t v;

	if (elf_open(path, &ef))
		return elf32_vaddr_to_offset(path, vaddr);
	v = elf_v2o(&ef, vaddr);
	elf_close(&ef);
	return v;
}

int ut_sdt_notes(const char *path, struct ut_sdt_note *notes, int max)
{
	struct elf64_shdr *ns, *bs;
	struct elf_file ef;
	size_t pos, end;
	int n = 0;

	if (elf_open(path, &ef))
		return elf32_sdt_notes(path, notes, max);
	ns = elf_section(&ef, ".note.stapsdt");
	bs = elf_section(&ef, ".stapsdt.base");
	if (!ns) {
		elf_close(&ef);
		return 0;
	}
	pos = ns->sh_offset;
	end = ns->sh_offset + ns->sh_size;
	while (pos + sizeof(struct elf64_note) <= end && n < max) {
		struct elf64_note *nh = (struct elf64_note *)(ef.data + pos);
		const char *name = (const char *)(nh + 1);
		const uint8_t *desc;
		struct ut_sdt_note *sn = &notes[n];
		uint64_t addr[3];
		const char *s;

		desc = (const uint8_t *)name + ((nh->n_namesz + 3) & ~3u);
		pos = (desc - ef.data) + ((nh->n_descsz + 3) & ~3u);
		if (pos > end)
			break;
		if (nh->n_type != 3 || nh->n_namesz != 8 ||
		    strcmp(name, "stapsdt") || nh->n_descsz < 3 * 8 + 3)
			continue;
		memcpy(addr, desc, sizeof(addr));
		memset(sn, 0, sizeof(*sn));
		s = (const char *)desc + 24;
		snprintf(sn->provider, sizeof(sn->provider), "%s", s);
		s += strlen(s) + 1;
		snprintf(sn->name, sizeof(sn->name), "%s", s);
		s += strlen(s) + 1;
		snprintf(sn->args, sizeof(sn->args), "%s", s);
		sn->pc = addr[0];
		sn->sem = addr[2];
		/* prelink may have moved things: adjust by the base delta */
		if (bs) {
			sn->pc += bs->sh_addr - addr[1];
			if (sn->sem)
				sn->sem += bs->sh_addr - addr[1];
		}
		sn->pc_off = elf_v2o(&ef, sn->pc);
		sn->sem_off = sn->sem ? (uint64_t)elf_v2o(&ef, sn->sem) : 0;
		n++;
	}
	elf_close(&ef);
	return n;
}

int ut_sdt_find(const char *path, const char *provider, const char *name,
		struct ut_sdt_note *note)
{
	struct ut_sdt_note notes[64];
	int i, n;

	n = ut_sdt_notes(path, notes, 64);
	for (i = 0; i < n; i++) {
		if (!strcmp(notes[i].provider, provider) &&
		    !strcmp(notes[i].name, name)) {
			*note = notes[i];
			return 0;
		}
	}
	return -1;
}

/* ---------------------------------------------------------------------- */
/* processes                                                               */

const char *ut_self_exe(void)
{
	static char exe[PATH_MAX];

	if (!exe[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n < 0)
			n = 0;
		exe[n] = '\0';
	}
	return exe;
}

const char *ut_self_dir(void)
{
	static char dir[PATH_MAX];

	if (!dir[0]) {
		char *slash;

		snprintf(dir, sizeof(dir), "%s", ut_self_exe());
		slash = strrchr(dir, '/');
		if (slash && slash != dir)
			*slash = '\0';
	}
	return dir;
}

const char *ut_helper(const char *name)
{
	static char paths[8][PATH_MAX + 256];
	static int idx;
	char *p = paths[idx++ % 8];

	snprintf(p, PATH_MAX + 256, "%.*s/%.200s", PATH_MAX - 1,
		 ut_self_dir(), name);
	return p;
}

int ut_proc_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	ssize_t n;

	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int ut_proc_read_u16(pid_t pid, uint64_t addr, uint16_t *val)
{
	return ut_proc_read(pid, addr, val, sizeof(*val));
}

int ut_proc_read_u8(pid_t pid, uint64_t addr, uint8_t *val)
{
	return ut_proc_read(pid, addr, val, sizeof(*val));
}

struct map_ent {
	uint64_t start, end, pgoff;
	bool private_write;	/* "rw-p"-like: where a reference counter lives */
	char path[PATH_MAX];
};

static int next_map(FILE *f, struct map_ent *m)
{
	char line[PATH_MAX + 256];

	while (fgets(line, sizeof(line), f)) {
		char perms[8];
		int pos = 0;

		m->path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n",
			   &m->start, &m->end, perms, &m->pgoff, &pos) < 4)
			continue;
		m->private_write = perms[1] == 'w' && perms[3] == 'p';
		if (pos) {
			size_t l;

			snprintf(m->path, sizeof(m->path), "%s", line + pos);
			l = strlen(m->path);
			while (l && (m->path[l - 1] == '\n' || m->path[l - 1] == ' '))
				m->path[--l] = '\0';
		}
		return 1;
	}
	return 0;
}

static FILE *open_maps(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	return fopen(path, "r");
}

uint64_t ut_map_base(pid_t pid, const char *path)
{
	struct map_ent m;
	uint64_t base = 0;
	FILE *f = open_maps(pid);

	if (!f)
		return 0;
	while (next_map(f, &m)) {
		if (!strcmp(m.path, path) && m.pgoff == 0) {
			base = m.start;
			break;
		}
	}
	fclose(f);
	return base;
}

static uint64_t fileoff_to_vaddr(pid_t pid, const char *path, uint64_t off,
				 bool private_write)
{
	struct map_ent m;
	uint64_t va = 0;
	FILE *f = open_maps(pid);

	if (!f)
		return 0;
	while (next_map(f, &m)) {
		if (strcmp(m.path, path) || (private_write && !m.private_write))
			continue;
		if (off >= m.pgoff && off < m.pgoff + (m.end - m.start)) {
			va = m.start + (off - m.pgoff);
			break;
		}
	}
	fclose(f);
	return va;
}

uint64_t ut_fileoff_to_vaddr(pid_t pid, const char *path, uint64_t off)
{
	return fileoff_to_vaddr(pid, path, off, false);
}

uint64_t ut_fileoff_to_data_vaddr(pid_t pid, const char *path, uint64_t off)
{
	return fileoff_to_vaddr(pid, path, off, true);
}

bool ut_is_mapped(pid_t pid, const char *path)
{
	struct map_ent m;
	bool found = false;
	FILE *f = open_maps(pid);

	if (!f)
		return false;
	while (next_map(f, &m))
		if (!strcmp(m.path, path))
			found = true;
	fclose(f);
	return found;
}

int ut_spawn(const char *const argv[], struct ut_child *c)
{
	int in[2], out[2];
	pid_t pid;

	c->pid = -1;
	c->to = -1;
	c->from = -1;
	if (pipe2(in, O_CLOEXEC))
		return -errno;
	if (pipe2(out, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->pid = pid;
	c->to = in[1];
	c->from = out[0];
	return 0;
}

int ut_spawn_target(struct ut_child *child, int *nchild, int max)
{
	const char *const argv[] = { ut_helper("uprobe_target"), NULL };
	struct ut_child *c;
	char buf[64];

	if (*nchild >= max)
		return -1;
	c = &child[*nchild];
	if (ut_spawn(argv, c))
		return -1;
	(*nchild)++;
	if (ut_cmd(c, buf, sizeof(buf), "ping") || strcmp(buf, "pong"))
		return -1;
	return *nchild - 1;
}

int ut_wait_input(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;

	do {
		r = poll(&pfd, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

int ut_readline(int fd, char *buf, size_t size, int timeout_ms)
{
	size_t len = 0;

	while (len + 1 < size) {
		ssize_t n;
		int r;

		r = ut_wait_input(fd, timeout_ms);
		if (r)
			return r;
		n = read(fd, buf + len, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return len ? 0 : -EPIPE;
		if (buf[len] == '\n')
			break;
		len++;
	}
	buf[len] = '\0';
	return 0;
}

int ut_cmd(struct ut_child *c, char *reply, size_t size, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(buf) - 1)
		return -E2BIG;
	buf[n++] = '\n';
	if (write(c->to, buf, n) != n)
		return -EPIPE;
	return ut_readline(c->from, reply, size, 10000);
}

long ut_ask(struct ut_child *c, const char *cmd)
{
	char buf[128];

	if (ut_cmd(c, buf, sizeof(buf), "%s", cmd))
		return -1;
	if (!strcmp(buf, "ok"))
		return 0;
	if (!strncmp(buf, "ok ", 3))
		return atol(buf + 3);
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	return atol(buf);
}

int ut_child_wait(struct ut_child *c)
{
	int status;

	if (c->to >= 0)
		close(c->to);
	if (c->from >= 0)
		close(c->from);
	c->to = -1;
	c->from = -1;
	if (c->pid <= 0)
		return -1;
	if (waitpid(c->pid, &status, 0) != c->pid)
		return -1;
	c->pid = -1;
	return status;
}

void ut_child_kill(struct ut_child *c)
{
	if (c->pid > 0)
		kill(c->pid, SIGKILL);
	ut_child_wait(c);
}

int ut_pin_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int ut_unpin_cpu(void)
{
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int ut_run(const char *const argv[], char *out, size_t size)
{
	size_t len = 0;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t n;

		if (len + 1 >= size) {
			char sink[256];

			n = read(p[0], sink, sizeof(sink));
		} else {
			n = read(p[0], out + len, size - len - 1);
			if (n > 0)
				len += n;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
	}
	if (size)
		out[len] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* ---------------------------------------------------------------------- */
/* implementation under test, mappings, kernel log                        */

bool ut_impl_is_stock(void)
{
	const char *impl = getenv("UPROBE_TEST_IMPL");

	return impl && !strcmp(impl, "stock");
}

bool ut_slow_kernel(void)
{
	return access("/proc/lockdep", F_OK) == 0;
}

void *ut_map_file(const char *path, uint64_t pgoff, size_t len, int prot,
		  int flags, bool rdwr)
{
	void *p;
	int fd;

	fd = open(path, rdwr ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, len, prot, flags, fd, pgoff);
	close(fd);
	return p;
}

long ut_smaps_anon_kb(pid_t pid, uint64_t addr)
{
	char path[64], line[PATH_MAX + 256];
	bool inside = false;
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		char c;

		/* a mapping's header line: "start-end perms ..." */
		if (sscanf(line, "%lx-%lx %c", &start, &end, &c) == 3 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (inside)
				break;
			inside = addr >= start && addr < end;
			continue;
		}
		if (inside && sscanf(line, "Anonymous: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

int ut_copy_file(const char *src, const char *dst)
{
	size_t len;
	char *buf = ut_read_file(src, &len);
	int fd, err = 0;

	if (!buf)
		return -EIO;
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0) {
		err = -errno;
	} else {
		if (write(fd, buf, len) != (ssize_t)len)
			err = -EIO;
		if (close(fd) && !err)
			err = -errno;
	}
	free(buf);
	return err;
}

int ut_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

int ut_kmsg_count(int fd, const char *a, const char *b, char *log,
		  size_t size)
{
	size_t len = log && size ? strlen(log) : 0;
	char rec[8192];
	int count = 0;

	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		char *text;

		if (n < 0 && errno == EPIPE)	/* overwritten: go on */
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		rec[n] = '\0';
		/* "prio,seq,usec,flags;text\n" then " KEY=VALUE" lines */
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		text[strcspn(text, "\n")] = '\0';
		if (strstr(text, a) && (!b || strstr(text, b)))
			count++;
		if (log && len + 1 < size) {	/* one line: " | " between */
			snprintf(log + len, size - len, "%s%s",
				 len ? " | " : "", text);
			len += strlen(log + len);
		}
	}
	return count;
}

/* Fault injection (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, fail-nth). */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static const struct {
	const char *path;
	const char *val;	/* what the test needs */
	const char *dflt;	/* the kernel's default */
} fi_knobs[] = {
	{ UT_FI_DIR "/failslab/ignore-gfp-wait", "N", "Y" },
	{ UT_FI_DIR "/failslab/verbose", "0", "2" },
	{ UT_FI_DIR "/fail_page_alloc/ignore-gfp-wait", "N", "Y" },
	{ UT_FI_DIR "/fail_page_alloc/ignore-gfp-highmem", "N", "Y" },
	{ UT_FI_DIR "/fail_page_alloc/min-order", "0", "1" },
	{ UT_FI_DIR "/fail_page_alloc/verbose", "0", "2" },
};

/* Put the fault-injection knobs ut_fi_setup() changed back to their defaults. */
void ut_fi_restore(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fi_knobs); i++)
		ut_write_file(fi_knobs[i].path, fi_knobs[i].dflt, false);
}

/* Make failslab and fail_page_alloc fail the task's n-th call quietly; 0 or -errno. */
int ut_fi_setup(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(fi_knobs); i++) {
		ret = ut_write_file(fi_knobs[i].path, fi_knobs[i].val, false);
		if (ret)
			return ret;
	}
	return 0;
}

/* Write @n to the fail-nth file @fd; 0 or -1. */
int ut_fail_nth_set(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : -1;
}

struct rseq *ut_rseq_area(void)
{
	if (!__rseq_size)	/* glibc did not register one */
		return NULL;
	return (struct rseq *)((char *)__builtin_thread_pointer() +
			       __rseq_offset);
}

int ut_rseq_unregister(void)
{
	struct rseq *area = ut_rseq_area();

	if (!area)
		return 0;
	if (syscall(__NR_rseq, area, sizeof(struct rseq), RSEQ_FLAG_UNREGISTER,
		    RSEQ_SIG))
		return -errno;
	return 0;
}

/* What the fail-nth file @fd reads: the calls left before a fault. */
long ut_fail_nth_get(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		return -1;
	return atol(buf);
}
