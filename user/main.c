// SPDX-License-Identifier: GPL-2.0
/* precord: parse the command line, run the recording (or the check). */
#include <stdlib.h>

#include "opts.h"
#include "record/session.h"

int main(int argc, char **argv)
{
	struct prec_opts o;
	int rc = opts_parse(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	rc = o.check ? record_check() : record_session__run(&o);
	opts_free(&o);
	return rc;
}
