/* SPDX-License-Identifier: GPL-2.0+ */
#include "../shim.h"
