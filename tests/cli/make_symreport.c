/* SPDX-License-Identifier: MIT */
/*
 * Writes a tiny gpuspy-process/1 report whose frames are real return
 * addresses of this process (into libsymtarget.so, into this executable,
 * and into C++ code when built), with the lines they must symbolize to, for
 * test_symbolize.py.  Built twice: as PIE (ET_DYN) and as ET_EXEC.
 *
 *   make_symreport OUTDIR ok|wrong-build-id
 *
 * The report goes to OUTDIR/symtest-PID/report.json; its extra key
 * "expect" (readers ignore unknown keys) holds the expected lines.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symtarget.h"

struct module {
	char path[4096];
	char build_id[130];
	uintptr_t base;
};

struct bid_query {
	uintptr_t base;
	const char *name;
	char *hex;
};

/* The GNU build-id note of the loaded object at Q->base named Q->name. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct bid_query *q = data;
	const char *name = info->dlpi_name ? info->dlpi_name : "";

	if (info->dlpi_addr != q->base || strcmp(name, q->name) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *nname = p + sizeof(*n);
			const unsigned char *desc =
				(const unsigned char *)nname + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(nname, "GNU", 4) == 0 && n->n_descsz <= 64) {
				for (unsigned j = 0; j < n->n_descsz; j++)
					sprintf(q->hex + 2 * j, "%02x", desc[j]);
				return 1;
			}
			p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static void module_of(void *addr, struct module *m)
{
	struct link_map *lm;
	struct bid_query q;
	Dl_info info;

	if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) {
		fprintf(stderr, "make_symreport: dladdr1 failed\n");
		exit(1);
	}
	m->base = lm->l_addr;
	if (lm->l_name[0]) {
		snprintf(m->path, sizeof(m->path), "%s", lm->l_name);
	} else {
		ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);

		if (n < 0) {
			perror("make_symreport: /proc/self/exe");
			exit(1);
		}
		m->path[n] = '\0';
	}
	m->build_id[0] = '\0';
	q.base = lm->l_addr;
	q.name = lm->l_name;
	q.hex = m->build_id;
	dl_iterate_phdr(find_build_id, &q);
}

static const char *exe_type(void)
{
	ElfW(Ehdr) eh;
	int fd = open("/proc/self/exe", O_RDONLY);

	if (fd < 0 || read(fd, &eh, sizeof(eh)) != sizeof(eh))
		return "?";
	close(fd);
	return eh.e_type == ET_EXEC ? "EXEC" : eh.e_type == ET_DYN ? "DYN" : "?";
}

static void put_json_string(FILE *f, const char *s)
{
	putc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putc('\\', f);
		putc(*s, f);
	}
	putc('"', f);
}

int main(int argc, char **argv)
{
	struct module mods[3];
	void *ra[3];
	int nframes = 2, cpp_line = 0, main_line;
	bool wrong;
	char dir[4096], file[4200];
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: make_symreport OUTDIR ok|wrong-build-id\n");
		return 2;
	}
	wrong = strcmp(argv[2], "wrong-build-id") == 0;

	ra[0] = symtarget_caller();
	ra[1] = symtarget_capture();
	main_line = __LINE__ - 1; /* the line of the call above */
#ifdef HAVE_CPP
	ra[2] = symtarget_cpp_entry(&cpp_line);
	nframes = 3;
#endif
	for (int i = 0; i < nframes; i++)
		module_of(ra[i], &mods[i]);

	snprintf(dir, sizeof(dir), "%s/symtest-%d", argv[1], (int)getpid());
	if (mkdir(argv[1], 0755) < 0 && errno != EEXIST) {
		perror(argv[1]);
		return 1;
	}
	if (mkdir(dir, 0755) < 0) {
		perror(dir);
		return 1;
	}
	snprintf(file, sizeof(file), "%s/report.json", dir);
	f = fopen(file, "w");
	if (!f) {
		perror(file);
		return 1;
	}
	fprintf(f,
		"{\"format\": \"gpuspy-process/1\", \"host\": \"symtest\", \"pid\": %d,\n"
		" \"command\": [\"make_symreport\"], \"complete\": true,\n"
		" \"leaked\": {\"bytes\": 4096, \"allocations\": 1}, \"peak\": {\"bytes\": 4096},\n"
		" \"kinds\": {\n",
		(int)getpid());
	fprintf(f,
		"  \"device\": {\"live_bytes\": 4096, \"live_allocations\": 1, \"peak_bytes\": 4096,"
		" \"allocated_bytes\": 4096, \"allocations\": 1, \"freed_bytes\": 0, \"frees\": 0}");
	for (int k = 0; k < 3; k++)
		fprintf(f,
			",\n  \"%s\": {\"live_bytes\": 0, \"live_allocations\": 0, \"peak_bytes\": 0,"
			" \"allocated_bytes\": 0, \"allocations\": 0, \"freed_bytes\": 0, \"frees\": 0}",
			(const char *[]){ "managed", "vmm", "pinned" }[k]);
	fprintf(f, "},\n \"untracked_frees\": 0,\n \"modules\": [\n");
	for (int i = 0; i < nframes; i++) {
		fprintf(f, "  {\"path\": ");
		put_json_string(f, mods[i].path);
		/* one module entry per frame keeps this simple; the reader
		 * opens each path once anyway */
		fprintf(f, ", \"build_id\": \"%s\", \"base\": %lu}%s\n",
			wrong ? "0123456789abcdef0123456789abcdef01234567" : mods[i].build_id,
			(unsigned long)mods[i].base, i + 1 < nframes ? "," : "");
	}
	fprintf(f, " ],\n \"sites\": [{\"id\": 1, \"kind\": \"device\", \"api\": \"cuMemAlloc_v2\","
		   " \"door\": \"driver\", \"live_bytes\": 4096, \"live_allocations\": 1,"
		   " \"peak_bytes\": 4096, \"allocated_bytes\": 4096, \"allocations\": 1,"
		   " \"freed_bytes\": 0, \"frees\": 0, \"first_seq\": 1,\n  \"frames\": [");
	for (int i = 0; i < nframes; i++)
		fprintf(f, "%s{\"module\": %d, \"offset\": %lu, \"symbol\": \"%s\"}", i ? ", " : "",
			i, (unsigned long)((uintptr_t)ra[i] - mods[i].base),
			/* a name libdw would never give: where it shows,
			 * the fallback was used */
			wrong ? "fallback_name" : "not_from_libdw");
	fprintf(f,
		"]}],\n \"expect\": {\"lib_line\": %d, \"main_line\": %d, \"cpp_line\": %d,"
		" \"exe_type\": \"%s\", \"lib_build_id\": \"%s\"}\n}\n",
		symtarget_line, main_line, cpp_line, exe_type(), mods[0].build_id);
	if (fclose(f) != 0) {
		perror(file);
		return 1;
	}
	puts(dir);
	return 0;
}
