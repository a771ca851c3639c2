/* SPDX-License-Identifier: GPL-2.0+ */
/* The decoder headers only need to know the byte order. */
#include <endian.h>
