/* SPDX-License-Identifier: GPL-2.0 */
/* Static keys as plain flags, for the user-space test. */
#ifndef AUP_SHIM_JUMP_LABEL_H
#define AUP_SHIM_JUMP_LABEL_H
#include <stdbool.h>

struct static_key_true {
	bool on;
};

#define DEFINE_STATIC_KEY_TRUE(n)	struct static_key_true n = { true }
#define DECLARE_STATIC_KEY_TRUE(n)	extern struct static_key_true n
#define static_branch_likely(k)		((k)->on)
#define static_branch_enable(k)		((k)->on = true)
#define static_branch_disable(k)	((k)->on = false)
#define static_key_enabled(k)		((k)->on)
#endif
