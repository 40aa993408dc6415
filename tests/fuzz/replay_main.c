// SPDX-License-Identifier: GPL-2.0
/*
 * Replays fuzz corpora without libFuzzer: each argument is a file (or a
 * directory of files) fed once to LLVMFuzzerTestOneInput.  Built with
 * ASan/UBSan by `make SAN=1 unit`, run by `make test`.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return perror(path), 1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		fclose(f);
		free(buf);
		return fprintf(stderr, "%s: read failed\n", path), 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, err = 0, count = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) || !S_ISDIR(st.st_mode)) {
			err |= replay_file(argv[i]);
			count++;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (de = readdir(d))) {
			char p[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
			err |= replay_file(p);
			count++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", count);
	return err;
}
