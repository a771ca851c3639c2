// SPDX-License-Identifier: GPL-2.0
/* bt(): print the frames _Unwind_Backtrace() walks from here. */
#include <unwind.h>
#include <stdio.h>
static _Unwind_Reason_Code cb(struct _Unwind_Context *c, void *d)
{
	int ip_before;
	printf("  pc %#lx cfa %#lx\n", (unsigned long)_Unwind_GetIPInfo(c, &ip_before), (unsigned long)_Unwind_GetCFA(c));
	return _URC_NO_REASON;
}
extern "C" void bt(void) { _Unwind_Reason_Code r = _Unwind_Backtrace(cb, 0); printf("  end %d\n", r); }
