// SPDX-License-Identifier: GPL-2.0+
/*
 * uprobes: the registry of probes, the consumer API and the walks over the mms of a file.
 *
 * Objects, lifetimes and the lock order: internal.h; the design:
 * Documentation/trace/uprobes.rst.
 */
#include "internal.h"

DEFINE_SRCU(uprobes_srcu);

/* Fork (read) against a walk's last resort (write): "Walks and fork" in the design. */
DEFINE_PERCPU_RWSEM(dup_mmap_sem);

struct rhashtable uprobe_inodes;

/* uprobe_inodes is initialised; nothing else may be touched otherwise. */
bool uprobes_ready __ro_after_init;

/* Source of &struct uprobe ids. */
static atomic64_t uprobe_ids = ATOMIC64_INIT(0);

/*
 * Every uprobe that has had a return consumer, by its key (allocated
 * cyclically from 1, so a key is reused only after the other 2^32 - 2;
 * 0 means none yet): a pending return instance records its probe's key
 * and id instead of holding a reference, so that neither a hit nor a
 * return writes the probe. A probe leaves the table before it is freed
 * through SRCU, so a lookup in an SRCU read section may use what it finds
 * (return_uprobe()). The xarray's own lock serialises its writers.
 */
DEFINE_XARRAY_ALLOC(uprobes_by_key);

static u32 uprobes_next_key;

static struct uprobe_inode *get_uprobe_inode(struct uprobe_inode *ui)
{
	return refcount_inc_not_zero(&ui->ref) ? ui : NULL;
}

static void free_uprobe_inode_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct uprobe_inode, rcu));
}

void put_uprobe_inode(struct uprobe_inode *ui)
{
	if (!refcount_dec_and_test(&ui->ref))
		return;
	rhashtable_remove_fast(&uprobe_inodes, &ui->node, uprobe_inodes_params);
	WARN_ON_ONCE(!xa_empty(&ui->probes));
	iput(ui->inode);
	call_rcu(&ui->rcu, free_uprobe_inode_rcu);
}

/* The probes of @inode, or NULL if it has none; takes a reference. */
struct uprobe_inode *find_uprobe_inode(struct inode *inode)
{
	struct uprobe_inode *ui;

	if (!uprobes_ready)
		return NULL;
	rcu_read_lock();
	ui = rhashtable_lookup(&uprobe_inodes, &inode, uprobe_inodes_params);
	if (ui)
		ui = get_uprobe_inode(ui);
	rcu_read_unlock();
	return ui;
}

/* The probes of @inode, created if needed; takes a reference. */
static struct uprobe_inode *find_or_add_uprobe_inode(struct inode *inode)
{
	struct uprobe_inode *ui, *old;

	for (;;) {
		ui = find_uprobe_inode(inode);
		if (ui)
			return ui;
		ui = kzalloc(sizeof(*ui), GFP_KERNEL);
		if (!ui)
			return ERR_PTR(-ENOMEM);
		ui->inode = igrab(inode);
		if (!ui->inode) {
			kfree(ui);
			return ERR_PTR(-ENOENT);
		}
		xa_init(&ui->probes);
		refcount_set(&ui->ref, 1);
		rcu_read_lock();
		old = rhashtable_lookup_get_insert_fast(&uprobe_inodes, &ui->node,
							uprobe_inodes_params);
		if (!old) {
			rcu_read_unlock();
			return ui;
		}
		if (!IS_ERR(old))
			old = get_uprobe_inode(old);
		rcu_read_unlock();
		iput(ui->inode);
		kfree(ui);
		if (old)
			return old;
		/* A dying entry is still in the table: wait for it to go. */
		cond_resched();
	}
}

struct uprobe *get_uprobe(struct uprobe *uprobe)
{
	return refcount_inc_not_zero(&uprobe->ref) ? uprobe : NULL;
}

static void free_uprobe(struct uprobe *uprobe)
{
	free_percpu(uprobe->stats);
	kfree(uprobe);
}

static void free_uprobe_srcu(struct rcu_head *rcu)
{
	free_uprobe(container_of(rcu, struct uprobe, rcu));
}

/* A new @uprobe that never went into its inode's table (it has no key). */
static void discard_new_uprobe(struct uprobe *uprobe)
{
	call_srcu(&uprobes_srcu, &uprobe->rcu, free_uprobe_srcu);
}

/* The last reference to @uprobe is gone: unlist it, free it after SRCU. */
noinline void release_uprobe(struct uprobe *uprobe)
{
	struct uprobe_inode *ui = uprobe->ui;

	xa_cmpxchg(&ui->probes, uprobe->offset, uprobe, NULL, 0);
	if (uprobe->key)
		xa_erase(&uprobes_by_key, uprobe->key);
	put_uprobe_inode(ui);
	call_srcu(&uprobes_srcu, &uprobe->rcu, free_uprobe_srcu);
}

/* A new site of @uprobe takes a reference (the caller holds one). */
struct uprobe *site_get_uprobe(struct uprobe *uprobe)
{
	refcount_inc(&uprobe->ref);
	atomic_inc(&uprobe->nr_sites);
	return uprobe;
}

/* @site is being freed: drop its reference. */
void site_put_uprobe(struct uprobe_site *site)
{
	atomic_dec(&site->uprobe->nr_sites);
	put_uprobe(site->uprobe);
}

/* The probe at @inode:@offset, or NULL; takes a reference. */
struct uprobe *find_uprobe(struct inode *inode, loff_t offset)
{
	struct uprobe_inode *ui = find_uprobe_inode(inode);
	struct uprobe *uprobe = NULL;

	if (!ui)
		return NULL;
	rcu_read_lock();
	uprobe = xa_load(&ui->probes, offset);
	if (uprobe)
		uprobe = get_uprobe(uprobe);
	rcu_read_unlock();
	put_uprobe_inode(ui);
	return uprobe;
}

/*
 * The probe at @inode:@offset, created if needed (with @ref_ctr_offset);
 * takes a reference. An existing probe keeps its counter offset: the
 * caller checks it under reg_lock (use_ref_ctr_locked()).
 */
static struct uprobe *find_or_add_uprobe(struct inode *inode, loff_t offset,
					 loff_t ref_ctr_offset)
{
	struct uprobe_inode *ui;
	struct uprobe *uprobe, *old;
	int err;

	ui = find_or_add_uprobe_inode(inode);
	if (IS_ERR(ui))
		return ERR_CAST(ui);
	uprobe = kzalloc(sizeof(*uprobe), GFP_KERNEL);
	if (!uprobe) {
		put_uprobe_inode(ui);
		return ERR_PTR(-ENOMEM);
	}
	uprobe->ui = ui;	/* the new probe owns our reference */
	uprobe->offset = offset;
	uprobe->ref_ctr_offset = ref_ctr_offset;
	uprobe->id = atomic64_inc_return(&uprobe_ids);
	refcount_set(&uprobe->ref, 1);
	mutex_init(&uprobe->reg_lock);
	INIT_LIST_HEAD(&uprobe->consumers);

	for (;;) {
		err = xa_insert(&ui->probes, offset, uprobe, GFP_KERNEL);
		if (!err)
			return uprobe;
		if (err != -EBUSY)
			break;
		rcu_read_lock();
		old = xa_load(&ui->probes, offset);
		if (old)
			old = get_uprobe(old);
		rcu_read_unlock();
		if (old) {
			discard_new_uprobe(uprobe);
			put_uprobe_inode(ui);
			return old;
		}
		/* a dying probe is leaving the slot */
		cond_resched();
	}
	discard_new_uprobe(uprobe);
	put_uprobe_inode(ui);
	return ERR_PTR(err);
}

/*
 * Enter @uprobe in uprobes_by_key for its first return consumer. The key
 * is stored before the consumer is published (list_add_rcu()): a hit that
 * finds the consumer but reads no key yet takes no return (prepare_return()).
 * Caller holds reg_lock.
 *
 * Return: 0, or -ENOMEM/-EBUSY.
 */
static int key_uprobe_locked(struct uprobe *uprobe)
{
	u32 key;
	int err;

	lockdep_assert_held(&uprobe->reg_lock);
	if (uprobe->key)
		return 0;
	err = xa_alloc_cyclic(&uprobes_by_key, &key, uprobe,
			      XA_LIMIT(1, U32_MAX), &uprobes_next_key,
			      GFP_KERNEL);
	if (err < 0)
		return err;
	WRITE_ONCE(uprobe->key, key);
	return 0;
}

/* Unpin the mms of @maps and free it unless it is the caller's @local. */
static void free_maps(struct map_entry *maps, int nr, struct map_entry *local)
{
	while (nr > 0)
		mmput(maps[--nr].mm);
	if (maps != local)
		kfree(maps);
}

/*
 * The mms that map @uprobe's file now, each pinned (an mm appears once per
 * mapping); *@nr receives their number. @whole: any part of the file,
 * else only its probed page, with the address of the offset in each
 * mapping. In @local (@cap entries) if they fit, else in an array to free
 * with free_maps(). Collected under i_mmap_rwsem, which cannot be held
 * while taking an mmap_lock.
 */
static struct map_entry *collect_maps(struct uprobe *uprobe, bool whole,
				      struct map_entry *local, int cap,
				      int *nr)
{
	struct inode *inode = uprobe->ui->inode;
	struct address_space *mapping = inode->i_mapping;
	pgoff_t first = whole ? 0 : uprobe->offset >> PAGE_SHIFT;
	pgoff_t last = whole ? ULONG_MAX : first;
	struct map_entry *maps = local;
	struct vm_area_struct *vma;
	int seen, filled;

	for (;;) {
		seen = 0;
		filled = 0;
		i_mmap_lock_read(mapping);
		vma_interval_tree_foreach(vma, &mapping->i_mmap, first, last) {
			if (!whole && !vma_can_probe(vma) &&
			    !(vma->vm_flags & VM_EXEC))
				continue;
			seen++;
			if (filled < cap && mmget_not_zero(vma->vm_mm)) {
				maps[filled].mm = vma->vm_mm;
				maps[filled].vaddr = whole ? 0 :
					offset_to_vaddr(vma, uprobe->offset);
				/* Pairs with uprobe_dup_mmap_done(). */
				maps[filled++].forks =
				    READ_ONCE(vma->vm_mm->uprobes_state.forks);
			}
		}
		i_mmap_unlock_read(mapping);
		if (seen <= cap)
			break;
		/* The array was too small: size it and collect again. */
		free_maps(maps, filled, local);
		cap = seen + 4;
		maps = kcalloc(cap, sizeof(*maps), GFP_KERNEL);
		if (!maps)
			return ERR_PTR(-ENOMEM);
	}
	*nr = filled;
	return maps;
}

static int cmp_maps(const void *a, const void *b)
{
	const struct mm_struct *x = ((const struct map_entry *)a)->mm;
	const struct mm_struct *y = ((const struct map_entry *)b)->mm;

	return x < y ? -1 : x > y;
}

/*
 * Does any consumer of @uprobe want it in @mm? Caller holds reg_lock (the
 * list's writers' lock) or is in uprobes_srcu.
 */
bool consumers_want_mm(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
		       struct mm_struct *mm)
{
	struct uprobe_consumer *uc;

	list_for_each_entry_srcu(uc, &uprobe->consumers, node,
				 srcu_read_lock_held(&uprobes_srcu) ||
				 lockdep_is_held(&uprobe->reg_lock)) {
		if (!uc->filter || uc->filter(uc, ctx, mm))
			return true;
	}
	return false;
}

/*
 * Has fork copied @mm since @maps (@nr entries, all of @mm) were
 * collected? Caller holds the mmap_lock, which fork holds while it copies.
 */
static bool copied_since(struct mm_struct *mm, const struct map_entry *maps,
			 int nr)
{
	mmap_assert_locked(mm);
	while (nr--) {
		if (maps[nr].forks != mm->uprobes_state.forks)
			return true;
	}
	return false;
}

/*
 * sync_maps_locked() over the mms that map @uprobe's probed page, or (@whole)
 * any part of its file. *@forked is set if one of them was copied by fork
 * since it was collected: the copy may be missing from the collection.
 */
static int sync_maps_in_locked(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
			       bool whole, bool *forked)
{
	bool adding = ctx == UPROBE_FILTER_REGISTER;
	int i, j, nr, err = 0, ret;
	struct map_entry local[2], *maps;

	lockdep_assert_held(&uprobe->reg_lock);
	maps = collect_maps(uprobe, whole, local, ARRAY_SIZE(local), &nr);
	if (IS_ERR(maps))
		return PTR_ERR(maps);
	/*
	 * An mm with several mappings of the file is visited once, which
	 * matters when each visit walks all its mappings. An mm with several
	 * mappings of the probed page may be visited once per mapping (each
	 * visit patches its own), which spares sorting the usual case.
	 */
	if (whole)
		sort(maps, nr, sizeof(*maps), cmp_maps, NULL);
	for (i = 0; i < nr; i = j) {
		struct mm_struct *mm = maps[i].mm;

		for (j = i + 1; j < nr && maps[j].mm == mm; j++)
			;
		mmap_write_lock(mm);
		if (copied_since(mm, maps + i, j - i))
			*forked = true;
		if (consumers_want_mm(uprobe, ctx, mm)) {
			ret = install_sites(uprobe, mm, maps + i, j - i);
			if (ret && !err && adding)
				err = ret;
		} else {
			remove_sites(uprobe, mm, maps + i, j - i);
		}
		mmap_write_unlock(mm);
	}
	free_maps(maps, nr, local);
	return err;
}

/*
 * One pass of sync_maps_locked(); *@forked as for sync_maps_in_locked().
 */
static int sync_maps_once_locked(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
				 bool *forked)
{
	int err = sync_maps_in_locked(uprobe, ctx, false, forked);

	if (ctx != UPROBE_FILTER_REGISTER && atomic_read(&uprobe->nr_sites))
		err = sync_maps_in_locked(uprobe, ctx, true, forked);
	return err;
}

/*
 * Bring every current mapping of @uprobe's file in line with its
 * consumers: install where one wants it, remove where none does. Caller
 * holds reg_lock. A site outside the mappings of the probed page is
 * detached (its text went away or moved); when sites are left after a
 * removal pass over those mappings, it visits every mm that maps any part
 * of the file, so that detached sites are settled too.
 *
 * A pass that met an mm copied by fork since it was collected goes again,
 * to reach the copy (see "Walks and fork" in the design); after
 * UPROBE_WALK_TRIES such passes, one more keeps forks out.
 *
 * Return: 0, or when @ctx is UPROBE_FILTER_REGISTER (removals do not fail
 * the walk) the first error of an install that fails the registration
 * (install_fatal()); mms that refuse the breakpoint are left out and
 * reported.
 */
static int sync_maps_locked(struct uprobe *uprobe, enum uprobe_filter_ctx ctx)
{
	bool forked;
	int tries, err;

	lockdep_assert_held(&uprobe->reg_lock);
	for (tries = 0; tries < UPROBE_WALK_TRIES; tries++) {
		forked = false;
		err = sync_maps_once_locked(uprobe, ctx, &forked);
		if (err && ctx == UPROBE_FILTER_REGISTER)
			return err;	/* the caller unwinds */
		if (!forked)
			return err;
		cond_resched();
	}
	percpu_down_write(&dup_mmap_sem);
	forked = false;
	err = sync_maps_once_locked(uprobe, ctx, &forked);
	percpu_up_write(&dup_mmap_sem);
	return err;
}

/*
 * Read the probed instruction from the file, once; decode it now if the
 * architecture can without an mm, else at the first install (analyze_in_mm()).
 */
static int read_and_analyze(struct uprobe *uprobe)
{
	uprobe_opcode_t opcode;
	int ret;

	lockdep_assert_held(&uprobe->reg_lock);
	if (test_bit(UPROBE_READ, &uprobe->flags))
		return 0;
	ret = read_file_bytes(uprobe->ui->inode, uprobe->offset,
			      &uprobe->arch.insn,
			      min_t(loff_t, sizeof(uprobe->arch.insn),
				    i_size_read(uprobe->ui->inode) -
				    uprobe->offset));
	if (ret)
		return ret;
	/* A trap (ours or a debugger's) can be neither stepped nor emulated. */
	BUILD_BUG_ON(sizeof(uprobe->arch.insn) < sizeof(opcode));
	memcpy(&opcode, &uprobe->arch.insn, sizeof(opcode));
	if (is_trap_insn(&opcode))
		return -ENOTSUPP;
	if (IS_ENABLED(CONFIG_ARCH_UPROBES_ANALYZE_WITHOUT_MM)) {
		ret = arch_uprobe_analyze_insn(&uprobe->arch, NULL, 0);
		if (ret)
			return ret;
		set_bit(UPROBE_ANALYZED, &uprobe->flags);
	}
	/* Installs read @arch only after consumers, published later. */
	set_bit(UPROBE_READ, &uprobe->flags);
	return 0;
}

/*
 * Make @ref_ctr_offset the counter of @uprobe. One instruction cannot
 * drive two counters: a probe with consumers or sites keeps its own, and
 * another one is refused. An unused probe (kept only for its counts, see
 * uprobe_stats_hold()) takes the new one. Caller holds reg_lock.
 */
static int use_ref_ctr_locked(struct uprobe *uprobe, loff_t ref_ctr_offset)
{
	lockdep_assert_held(&uprobe->reg_lock);
	if (uprobe->ref_ctr_offset == ref_ctr_offset)
		return 0;
	if (!list_empty(&uprobe->consumers) || atomic_read(&uprobe->nr_sites)) {
		pr_warn_ratelimited("uprobes: %lu:%llx already has reference counter offset %llx, not %llx\n",
				    uprobe->ui->inode->i_ino, uprobe->offset,
				    uprobe->ref_ctr_offset, ref_ctr_offset);
		return -EINVAL;
	}
	/* Published by list_add_rcu() of the consumer; see install_wanted(). */
	WRITE_ONCE(uprobe->ref_ctr_offset, ref_ctr_offset);
	return 0;
}

/*
 * Keep UPROBE_RETURNS_MANY of @uprobe true while it has two or more return
 * consumers, counting @extra more (1: one is about to be added). It is set
 * before such a consumer is published and cleared after one is removed; a
 * return racing the change may see it stale by that one consumer, as any
 * hit racing a registration may (uprobe_handle_return()).
 */
static void note_returns_locked(struct uprobe *uprobe, int extra)
{
	struct uprobe_consumer *uc;
	int n = extra;

	lockdep_assert_held(&uprobe->reg_lock);
	list_for_each_entry(uc, &uprobe->consumers, node)
		n += !!uc->ret_handler;
	assign_bit(UPROBE_RETURNS_MANY, &uprobe->flags, n > 1);
}

/**
 * uprobe_register_refctr - add a consumer to the probe at @inode:@offset
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @ref_ctr_offset: file offset of the SDT counter (unsigned short), or 0
 * @uc: the consumer; see &struct uprobe_consumer
 *
 * Installs the breakpoint in every current mapping of the file that a
 * consumer's filter accepts; later mappings get it as they appear. The
 * counter is raised in each process where a writable mapping of the file
 * holds it; one no mapping holds (beyond the file's end, for instance:
 * perf's uprobe PMU passes on what tools give it) is never raised.
 *
 * Return: 0, or -errno with nothing left behind.
 */
int uprobe_register_refctr(struct inode *inode, loff_t offset,
			   loff_t ref_ctr_offset, struct uprobe_consumer *uc)
{
	struct uprobe *uprobe;
	bool first;
	int ret;

	if (!uprobes_ready)
		return -ENOMEM;
	if (!uc->handler && !uc->ret_handler)
		return -EINVAL;
	if (!S_ISREG(inode->i_mode))
		return -EINVAL;
	/* hugetlbfs and the like: no page cache page to copy and patch */
	if (!inode->i_mapping->a_ops->read_folio &&
	    !shmem_mapping(inode->i_mapping))
		return -EOPNOTSUPP;
	if (offset < 0 || offset >= i_size_read(inode))
		return -EINVAL;
	/* A breakpoint is written within one page, at the insn's alignment. */
	if (offset_in_page(offset) > PAGE_SIZE - UPROBE_SWBP_INSN_SIZE ||
	    !IS_ALIGNED(offset, UPROBE_SWBP_INSN_SIZE))
		return -EINVAL;
	/* One beyond the file's end is taken: no mapping holds it. */
	if (ref_ctr_offset < 0 || (ref_ctr_offset & 1))
		return -EINVAL;

	uprobe = find_or_add_uprobe(inode, offset, ref_ctr_offset);
	if (IS_ERR(uprobe))
		return PTR_ERR(uprobe);

	mutex_lock(&uprobe->reg_lock);
	ret = use_ref_ctr_locked(uprobe, ref_ctr_offset);
	if (ret)
		goto unlock;
	ret = read_and_analyze(uprobe);
	if (ret)
		goto unlock;
	if (uc->ret_handler) {
		ret = key_uprobe_locked(uprobe);
		if (ret)
			goto unlock;
		note_returns_locked(uprobe, 1);
	}
	first = list_empty(&uprobe->consumers);
	list_add_rcu(&uc->node, &uprobe->consumers);
	ret = sync_maps_locked(uprobe, UPROBE_FILTER_REGISTER);
	if (ret) {
		list_del_rcu(&uc->node);
		note_returns_locked(uprobe, 0);
		sync_maps_locked(uprobe, UPROBE_FILTER_UNREGISTER);
		goto unlock;
	}
	if (first)
		get_uprobe(uprobe);	/* held while there are consumers */
unlock:
	mutex_unlock(&uprobe->reg_lock);
	if (ret)
		synchronize_srcu(&uprobes_srcu);
	put_uprobe(uprobe);
	return ret;
}
EXPORT_SYMBOL_GPL(uprobe_register_refctr);

/**
 * uprobe_register - add a consumer to the probe at @inode:@offset
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @uc: the consumer
 *
 * Return: 0, or -errno.
 */
int uprobe_register(struct inode *inode, loff_t offset,
		    struct uprobe_consumer *uc)
{
	return uprobe_register_refctr(inode, offset, 0, uc);
}
EXPORT_SYMBOL_GPL(uprobe_register);

/*
 * Remove @uc from the probe at @inode:@offset and the breakpoint from every
 * mm where no remaining consumer wants it; handlers of @uc may still be
 * running. Drops the consumers' reference with the last consumer.
 */
static void unregister_consumer(struct inode *inode, loff_t offset,
				struct uprobe_consumer *uc)
{
	struct uprobe *uprobe = find_uprobe(inode, offset);
	bool last;

	if (WARN_ON_ONCE(!uprobe))
		return;
	mutex_lock(&uprobe->reg_lock);
	list_del_rcu(&uc->node);
	if (uc->ret_handler)
		note_returns_locked(uprobe, 0);
	last = list_empty(&uprobe->consumers);
	sync_maps_locked(uprobe, UPROBE_FILTER_UNREGISTER);
	mutex_unlock(&uprobe->reg_lock);
	/* Freed through SRCU: handlers still running keep it valid. */
	if (last)
		put_uprobe(uprobe);	/* the consumers' reference */
	put_uprobe(uprobe);
}

/**
 * uprobe_unregister - remove a consumer from the probe at @inode:@offset
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @uc: the consumer, as registered
 *
 * On return no handler of @uc runs any more, and the breakpoint is gone
 * from every mm where no remaining consumer wants it.
 */
void uprobe_unregister(struct inode *inode, loff_t offset,
		       struct uprobe_consumer *uc)
{
	unregister_consumer(inode, offset, uc);
	/* Pairs with srcu_read_lock() around the handlers on the hit path. */
	synchronize_srcu(&uprobes_srcu);
}
EXPORT_SYMBOL_GPL(uprobe_unregister);

/**
 * uprobe_unregister_nosync - uprobe_unregister() without the wait
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @uc: the consumer, as registered
 *
 * For a caller unregistering many consumers in a row: handlers of @uc may
 * still be running on return. Before @uc is freed, registered again, or
 * what its handlers use is freed, pass the result to uprobe_unregister_wait().
 *
 * Return: a cookie for uprobe_unregister_wait().
 */
unsigned long uprobe_unregister_nosync(struct inode *inode, loff_t offset,
				       struct uprobe_consumer *uc)
{
	unregister_consumer(inode, offset, uc);
	/* Pairs with srcu_read_lock() around the handlers on the hit path. */
	return start_poll_synchronize_srcu(&uprobes_srcu);
}

/**
 * uprobe_unregister_wait - wait for the handlers of a nosync unregister
 * @cookie: what uprobe_unregister_nosync() returned
 *
 * On return no handler of that consumer runs any more. The grace periods
 * started by a run of uprobe_unregister_nosync() calls end together, so
 * waiting for each cookie in turn waits about once.
 */
void uprobe_unregister_wait(unsigned long cookie)
{
	if (!poll_state_synchronize_srcu(&uprobes_srcu, cookie))
		synchronize_srcu(&uprobes_srcu);
}

/**
 * uprobe_unregister_done - have the handlers of a nosync unregister returned?
 * @cookie: what uprobe_unregister_nosync() returned
 *
 * Context: any; never waits.
 *
 * Return: true once uprobe_unregister_wait(@cookie) would not wait.
 */
bool uprobe_unregister_done(unsigned long cookie)
{
	return poll_state_synchronize_srcu(&uprobes_srcu, cookie);
}

/**
 * uprobe_apply - re-evaluate @uc's filter over the current mappings
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @uc: a registered consumer
 * @add: true when the filter now accepts more mms, false when fewer
 *
 * Return: 0, or -errno (-ENOENT when @uc is not registered there).
 */
int uprobe_apply(struct inode *inode, loff_t offset,
		 struct uprobe_consumer *uc, bool add)
{
	struct uprobe *uprobe = find_uprobe(inode, offset);
	struct uprobe_consumer *cur;
	int ret = -ENOENT;

	if (!uprobe)
		return -ENOENT;
	mutex_lock(&uprobe->reg_lock);
	list_for_each_entry(cur, &uprobe->consumers, node) {
		if (cur == uc) {
			ret = sync_maps_locked(uprobe,
					       add ? UPROBE_FILTER_REGISTER :
						     UPROBE_FILTER_UNREGISTER);
			break;
		}
	}
	mutex_unlock(&uprobe->reg_lock);
	put_uprobe(uprobe);
	return ret;
}

/* @uprobe's counts summed over all CPUs, into @stats. */
static void sum_stats(struct uprobe *uprobe, struct uprobe_stats *stats)
{
	/* Address dependency: pairs with the cmpxchg() in alloc_stats(). */
	struct uprobe_stats __percpu *counts = READ_ONCE(uprobe->stats);
	int cpu;

	memset(stats, 0, sizeof(*stats));
	if (!counts)
		return;		/* never hit */
	for_each_possible_cpu(cpu) {
		struct uprobe_stats *c = per_cpu_ptr(counts, cpu);

		stats->hits += READ_ONCE(c->hits);
		stats->emulated += READ_ONCE(c->emulated);
		stats->stepped += READ_ONCE(c->stepped);
		stats->boosted += READ_ONCE(c->boosted);
		stats->missed += READ_ONCE(c->missed);
	}
}

/**
 * uprobe_get_stats - how the hits of the probe at @inode:@offset were handled
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 * @stats: filled with the sums over all CPUs
 *
 * The counts cover every process and every consumer of the probe, from its
 * creation (its first registration after it had none) on. A hit is counted
 * only if a consumer's handler saw it.
 *
 * Return: 0, or -ENOENT when there is no such probe.
 */
int uprobe_get_stats(struct inode *inode, loff_t offset,
		     struct uprobe_stats *stats)
{
	struct uprobe *uprobe = find_uprobe(inode, offset);

	memset(stats, 0, sizeof(*stats));
	if (!uprobe)
		return -ENOENT;
	sum_stats(uprobe, stats);
	put_uprobe(uprobe);
	return 0;
}

/**
 * uprobe_stats_hold - keep the probe at @inode:@offset for its final counts
 * @inode: the probed file
 * @offset: file offset of the probed instruction
 *
 * A hit still in progress when its consumer is unregistered is counted
 * before uprobe_unregister_wait() returns, possibly after the probe lost
 * its last consumer. A caller that wants those counts holds the probe
 * across the unregister and the wait, then reads them with
 * uprobe_stats_release(). The held probe has no breakpoint of its own; a
 * registration at @inode:@offset meanwhile uses it again, with its own
 * counter offset.
 *
 * Return: the probe, or NULL when there is none.
 */
struct uprobe *uprobe_stats_hold(struct inode *inode, loff_t offset)
{
	return find_uprobe(inode, offset);
}

/**
 * uprobe_stats_release - read a held probe's counts and let it go
 * @uprobe: what uprobe_stats_hold() returned, or NULL
 * @stats: filled as by uprobe_get_stats(); zeroes for a NULL @uprobe
 */
void uprobe_stats_release(struct uprobe *uprobe, struct uprobe_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (!uprobe)
		return;
	sum_stats(uprobe, stats);
	put_uprobe(uprobe);
}

/**
 * uprobe_stats_peek - read a held probe's counts so far
 * @uprobe: what uprobe_stats_hold() returned, or NULL
 * @stats: filled as by uprobe_get_stats(); zeroes for a NULL @uprobe
 *
 * The counts are final once the handlers the hold waits for have returned
 * (uprobe_unregister_done()).
 */
void uprobe_stats_peek(struct uprobe *uprobe, struct uprobe_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (uprobe)
		sum_stats(uprobe, stats);
}

/**
 * uprobe_stats_settled - may a held probe's counts still grow?
 * @uprobe: what uprobe_stats_hold() returned, or NULL
 *
 * A hit counted before the unregister's grace period ended may have left
 * its read section to carry out the instruction in a way that can wait
 * (see "The hit path and uprobes_srcu"); it says how it did that later.
 * Once uprobe_unregister_done() and this say so, the counts read after
 * are final.
 *
 * Return: true if no such hit is in progress.
 */
bool uprobe_stats_settled(struct uprobe *uprobe)
{
	/* Pairs with atomic_dec_return_release() in hit_end(). */
	return !uprobe || !atomic_read_acquire(&uprobe->held_hits);
}
