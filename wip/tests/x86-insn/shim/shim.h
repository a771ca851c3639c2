/* SPDX-License-Identifier: GPL-2.0+ */
/*
 * User-space stand-ins for the kernel interfaces that
 * arch/x86/kernel/uprobes/ uses, so that the test can include its files
 * unchanged. "User memory" accesses go through aup_test_put/get, which the
 * test implements (and can make fail).
 */
#ifndef AUP_TEST_SHIM_H
#define AUP_TEST_SHIM_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

typedef unsigned char u8;
typedef signed char s8;
typedef unsigned short u16;
typedef short s16;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;

#define CONFIG_X86_64	1
#define CONFIG_UPROBES	1
#define CONFIG_UPROBE_JUMP_SITES	1
#define CONFIG_HAVE_HW_BREAKPOINT	1
#define IS_ENABLED(CONFIG_opt)	(CONFIG_opt)

#define __user
#define __init
#define BIT(n)		(1UL << (n))
#define BIT_ULL(n)	(1ULL << (n))
#define U32_MAX		0xffffffffU
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(c)	static_assert(!(c), #c)
#define fallthrough	__attribute__((__fallthrough__))
#define NOKPROBE_SYMBOL(fn)	extern int aup_test_nokprobe_unused
#define nokprobe_inline	inline
#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define module_param_named(name, var, type, perm)		\
	extern int aup_test_param_unused
#define MODULE_PARM_DESC(name, desc)	extern int aup_test_param_unused
#define module_param_cb(name, ops, arg, perm)			\
	extern int aup_test_param_unused
#define get_unaligned(p)					\
({								\
	__typeof__(*(p)) __v;					\
	memcpy(&__v, (p), sizeof(__v));			\
	__v;							\
})
#define put_unaligned(v, p)					\
do {								\
	__typeof__(*(p)) __v = (v);				\
	memcpy((p), &__v, sizeof(__v));				\
} while (0)

struct list_head {
	struct list_head *next, *prev;
};

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

#define __USER_CS	0x33
#define __USER32_CS	0x23
#define __USER_DS	0x2b

#define X86_EFLAGS_CF	0x0001UL
#define X86_EFLAGS_PF	0x0004UL
#define X86_EFLAGS_AF	0x0010UL
#define X86_EFLAGS_ZF	0x0040UL
#define X86_EFLAGS_SF	0x0080UL
#define X86_EFLAGS_TF	0x0100UL
#define X86_EFLAGS_IF	0x0200UL
#define X86_EFLAGS_DF	0x0400UL
#define X86_EFLAGS_OF	0x0800UL
#define X86_EFLAGS_RF	0x10000UL
#define X86_EFLAGS_AC	0x40000UL
#define X86_EFLAGS_VM	0x20000UL

#define DR_TRAP0	0x1UL
#define DR_TRAP1	0x2UL
#define DR_TRAP2	0x4UL
#define DR_TRAP3	0x8UL
#define DR_TRAP_BITS	0xfUL
#define DR_BUS_LOCK	0x800UL
#define DR_STEP		0x4000UL
#define DR_GLOBAL_ENABLE_MASK	0xaaUL
#ifndef TRAP_TRACE
#define TRAP_TRACE	2
#define TRAP_BRKPT	1
#define TRAP_HWBKPT	4
#endif
#define X86_TRAP_DB	1
#define X86_TRAP_GP	13
#define TASK_SIZE_MAX	((1UL << 47) - 4096)

#define TIF_SINGLESTEP	4
#define TIF_BLOCKSTEP	25

static inline bool user_mode(struct pt_regs *regs)
{
	return (regs->cs & 3) == 3;
}

static inline bool user_64bit_mode(struct pt_regs *regs)
{
	return regs->cs == __USER_CS;
}

static inline unsigned long instruction_pointer(struct pt_regs *regs)
{
	return regs->ip;
}

/* The vDSO's return stubs (patches/0005): offsets in its image, 0 if none. */
struct vdso_image {
	long sym_uretprobe_table;
	long sym_uretprobe_stubs;
	long sym_uretprobe_stubs_end;
	long sym_uretprobe_syscall_end;
};

typedef struct {
	void __user *vdso;
	const struct vdso_image *vdso_image;
} mm_context_t;

struct mm_struct {
	bool ia32;
	mm_context_t context;
};

void vdso_uretprobe_table_zap(struct mm_struct *mm);

static inline bool is_64bit_mm(struct mm_struct *mm)
{
	return !mm->ia32;
}

struct uprobe_task;

struct thread_struct {
	unsigned long trap_nr;
	unsigned long error_code;
	unsigned long virtual_dr6;
};

struct task_struct {
	struct thread_struct thread;
	struct uprobe_task *utask;
	struct mm_struct *mm;
	unsigned long tif;
};

extern struct task_struct *aup_test_current;
#define current aup_test_current

static inline bool test_thread_flag(int flag)
{
	return current->tif & BIT(flag);
}

#define _TIF_SINGLESTEP	BIT(TIF_SINGLESTEP)
#define _TIF_BLOCKSTEP	BIT(TIF_BLOCKSTEP)

static inline unsigned long read_thread_flags(void)
{
	return current->tif;
}

#ifndef noinline
#define noinline	__attribute__((__noinline__))
#endif

/* The system call being run is a 32-bit one (the test sets it). */
extern bool aup_test_ia32_syscall;
#define in_ia32_syscall()	aup_test_ia32_syscall
#define __NR_uretprobe	335
#define __NR_uprobe	336
#ifndef PAGE_SIZE
#define PAGE_SIZE	4096UL
#endif
#define put_unaligned_le32(v, p)	put_unaligned((u32)(v), (u32 *)(p))
#define SYSCALL_DEFINE0(name)	long aup_test_sys_##name(void)
struct pt_regs *current_pt_regs(void);

void set_task_blockstep(struct task_struct *t, bool on);
void send_sigtrap(struct pt_regs *regs, int error_code, int si_code);
void force_sig(int sig);

static inline int get_si_code(unsigned long condition)
{
	if (condition & DR_STEP)
		return TRAP_TRACE;
	else if (condition & DR_TRAP_BITS)
		return TRAP_HWBKPT;
	else
		return TRAP_BRKPT;
}

/*
 * 48 virtual address bits (4-level paging) unless the test says otherwise;
 * the vendor of the CPU the test runs on.
 */
struct cpuinfo_x86 {
	u8 x86_vendor;
	u8 x86_virt_bits;
};

#define X86_VENDOR_INTEL	0
#define X86_VENDOR_AMD		2
#define X86_VENDOR_HYGON	9

extern struct cpuinfo_x86 boot_cpu_data;

/* DR7 of this CPU (the test's) and the data-breakpoint report (patches/0014). */
extern unsigned long cpu_dr7;
#define this_cpu_read(pcp)	(pcp)
bool hw_breakpoint_user_access(struct pt_regs *regs, unsigned long addr,
			       unsigned int len, bool write);

static inline u64 __is_canonical_address(u64 vaddr, u8 vaddr_bits)
{
	return ((s64)vaddr << (64 - vaddr_bits) >> (64 - vaddr_bits)) == (s64)vaddr;
}

int aup_test_put(void *addr, u64 val, unsigned int size);
int aup_test_get(const void *addr, u64 *val, unsigned int size);

static inline unsigned long copy_from_user(void *to, const void __user *from,
					   unsigned long n)
{
	u64 v;

	if (n > sizeof(v) || aup_test_get(from, &v, n))
		return n;
	memcpy(to, &v, n);
	return 0;
}

static inline unsigned long copy_to_user(void __user *to, const void *from,
					 unsigned long n)
{
	u64 v = 0;

	if (n > sizeof(v))
		return n;
	memcpy(&v, from, n);
	return aup_test_put(to, v, n) ? n : 0;
}

#define put_user(x, ptr)					\
({								\
	__typeof__(ptr) __p = (ptr);				\
	aup_test_put((void *)__p, (u64)(x), sizeof(*__p));	\
})
#define get_user(x, ptr)					\
({								\
	__typeof__(ptr) __p = (ptr);				\
	u64 __v = 0;						\
	int __e = aup_test_get((const void *)__p, &__v, sizeof(*__p));\
	(x) = (__typeof__(x))__v;				\
	__e;							\
})

static inline bool user_read_access_begin(const void __user *ptr, size_t len)
{
	return true;
}
#define user_read_access_end()	do { } while (0)
#define unsafe_get_user(x, ptr, label)				\
do {								\
	if (get_user(x, ptr))					\
		goto label;					\
} while (0)

#define SZ_16K		0x00004000
#define pagefault_disable()	do { } while (0)
#define pagefault_enable()	do { } while (0)

static inline bool user_access_begin(const void __user *ptr, size_t len)
{
	return true;
}
#define user_access_end()	do { } while (0)
#define unsafe_put_user(x, ptr, label)				\
do {								\
	if (put_user(x, ptr))					\
		goto label;					\
} while (0)

#define NOTIFY_DONE	0x0000
#define NOTIFY_STOP	0x8001

enum die_val {
	DIE_OOPS = 1,
	DIE_INT3,
	DIE_DEBUG,
};

struct die_args {
	struct pt_regs *regs;
	const char *str;
	long err;
	int trapnr;
	int signr;
};

struct notifier_block {
	int (*notifier_call)(struct notifier_block *nb, unsigned long val,
			     void *data);
	struct notifier_block *next;
	int priority;
};

/* The decoder of the base tree (tools copy); the Makefile names it. */
#include AUP_TOOLS_INSN_H

#endif /* AUP_TEST_SHIM_H */
