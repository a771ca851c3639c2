// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based dynamic events: the tracefs and perf front end of uprobes.
 *
 * A user defines an event with a line in uprobe_events or dynamic_events,
 *
 *	p|r[:[GRP/][EVENT]] PATH:OFFSET[%return][(REF_CTR_OFFSET)] [FETCHARGS]
 *	-:[GRP/]EVENT [PATH:OFFSET... [FETCHARGS]]
 *
 * or perf creates a local one with perf_event_open(type=uprobe). The
 * trace_probe library parses the fetch arguments and owns their types and
 * printing, the event call and its files, and the error log. This file
 * parses the place (PATH:OFFSET, %return, REF_CTR_OFFSET), defines and
 * deletes the events, registers their probes with the uprobes core while
 * an event is enabled, keeps the event's perf targets, and serves the
 * tracefs files uprobe_events, uprobe_profile and uprobe_stats (per probe:
 * how the core handled its hits). The handlers are in trace_uprobe_hit.c,
 * the arguments and the records in trace_uprobe_fetch.c, the objects,
 * their lifetimes and the lock order in trace_uprobe.h.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

#include <linux/bpf.h>
#include <linux/ctype.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/security.h>
#include <linux/string.h>
#include <linux/uprobes.h>
#include <linux/wait_bit.h>

#include "trace_uprobe.h"

#define UPROBE_EVENT_SYSTEM	"uprobes"

/*
 * RCU state when a trace file last left a uprobe event (event_mutex):
 * handlers use the files they find only inside rcu_read_lock(), so the
 * files may be freed once this grace period has passed.
 */
static unsigned long files_gp;

static int dyn_define(const char *raw_command);
static int dyn_show_definition(struct seq_file *m, struct dyn_event *ev);
static int dyn_delete(struct dyn_event *ev);
static bool dyn_in_use(struct dyn_event *ev);
static bool dyn_matches(const char *system, const char *event,
			int argc, const char **argv,
			struct dyn_event *ev);

static struct dyn_event_operations uprobe_dyn_ops = {
	.create = dyn_define,
	.show = dyn_show_definition,
	.is_busy = dyn_in_use,
	.free = dyn_delete,
	.match = dyn_matches,
};

static bool dyn_is_uprobe(struct dyn_event *ev)
{
	return ev->ops == &uprobe_dyn_ops;
}

static struct trace_uprobe *dyn_to_tu(struct dyn_event *ev)
{
	return container_of(ev, struct trace_uprobe, devent);
}

/* The uprobe event @ev is, or NULL for another kind of dynamic event. */
static struct trace_uprobe *dyn_uprobe_or_null(struct dyn_event *ev)
{
	return dyn_is_uprobe(ev) ? dyn_to_tu(ev) : NULL;
}

static unsigned long tu_hits(struct trace_uprobe *tu)
{
	unsigned long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *per_cpu_ptr(tu->nhits, cpu);
	return n;
}

/* ------------------------------------------------- registering the probes */

/* @sum += @now - @start, field by field. */
static void stats_add_delta(struct uprobe_stats *sum,
			    const struct uprobe_stats *now,
			    const struct uprobe_stats *start)
{
	sum->hits += now->hits - start->hits;
	sum->emulated += now->emulated - start->emulated;
	sum->stepped += now->stepped - start->stepped;
	sum->boosted += now->boosted - start->boosted;
	sum->missed += now->missed - start->missed;
}

/*
 * A retired registration's handlers have all returned: its counts are final.
 * Caller holds event_mutex or owns @tu (deleted).
 */
static void reg_done(struct trace_uprobe *tu, struct tu_reg *reg)
{
	struct uprobe_stats now;

	uprobe_stats_release(reg->held, &now);
	if (!reg->folded)
		stats_add_delta(&tu->stats_done, &now, &reg->stats_start);
	list_del(&reg->node);
	kfree(reg);
}

/*
 * Free the retired registrations whose handlers have returned, and whose
 * deferred fetches too; never waits.
 */
static void reap_retired(struct trace_uprobe *tu)
{
	struct tu_reg *reg, *next;

	list_for_each_entry_safe(reg, next, &tu->retired, node)
		if (uprobe_unregister_done(reg->cookie) &&
		    uprobe_stats_settled(reg->held) &&
		    !atomic_read_acquire(&reg->deferred))
			reg_done(tu, reg);
}

/*
 * The core's counts for @tu's probe while @tu used it, the hits of
 * handlers still running after a disable included as far as they got.
 * Caller holds event_mutex (registration state).
 *
 * Return: true while those handlers may still add to the counts.
 */
static bool tu_stats(struct trace_uprobe *tu, struct uprobe_stats *st)
{
	struct uprobe_stats now;
	struct tu_reg *reg;
	bool settling = false;

	lockdep_assert_held(&event_mutex);
	reap_retired(tu);
	*st = tu->stats_done;
	list_for_each_entry(reg, &tu->retired, node) {
		if (reg->folded)
			continue;
		uprobe_stats_peek(reg->held, &now);
		stats_add_delta(st, &now, &reg->stats_start);
		settling = true;
	}
	if (tu->reg && !uprobe_get_stats(tu->inode, tu->offset, &now))
		stats_add_delta(st, &now, &tu->reg->stats_start);
	return settling;
}

/*
 * Wait for the handlers of @tu's retired registrations (their hits are
 * counted then), and with @deferred for the fetches they deferred too,
 * which a process can keep waiting for ever: only the free of a deleted
 * @tu waits for those, outside event_mutex. A registration is freed once
 * both are done. Caller holds event_mutex or owns @tu (deleted).
 */
static void wait_retired(struct trace_uprobe *tu, bool deferred)
{
	struct tu_reg *reg, *next;

	list_for_each_entry_safe(reg, next, &tu->retired, node) {
		uprobe_unregister_wait(reg->cookie);
		if (deferred)
			wait_var_event(&reg->deferred,
				       !atomic_read(&reg->deferred));
		if (!atomic_read_acquire(&reg->deferred))
			reg_done(tu, reg);
	}
}

/*
 * Register @tu with a new consumer. A retired registration on the same
 * core probe (held, so the core uses it again) ends its counts here, where
 * the new one starts. Caller holds event_mutex.
 */
static int register_probe(struct trace_uprobe *tu)
{
	struct tu_reg *reg, *old;
	struct uprobe_stats now;
	struct uprobe *cur;
	int ret;

	lockdep_assert_held(&event_mutex);
	if (tu->reg)
		return 0;
	reap_retired(tu);
	reg = kzalloc(sizeof(*reg), GFP_KERNEL);
	if (!reg)
		return -ENOMEM;
	reg->tu = tu;
	reg->consumer.handler = tu_entry_handler;
	if (tu->is_ret)
		reg->consumer.ret_handler = tu_return_handler;
	reg->consumer.filter = tu_filter;
	cur = uprobe_stats_hold(tu->inode, tu->offset);
	/* zeroes when the core creates the probe for us */
	uprobe_stats_peek(cur, &reg->stats_start);
	list_for_each_entry(old, &tu->retired, node) {
		if (old->folded || !cur || old->held != cur)
			continue;
		stats_add_delta(&tu->stats_done, &reg->stats_start,
				&old->stats_start);
		uprobe_stats_release(old->held, &now);
		old->held = NULL;
		old->folded = true;
	}
	ret = uprobe_register_refctr(tu->inode, tu->offset, tu->ref_ctr_offset,
				     &reg->consumer);
	uprobe_stats_release(cur, &now);
	if (ret) {
		kfree(reg);
		return ret;
	}
	tu->reg = reg;
	return 0;
}

/*
 * Unregister @tu without waiting for its handlers: the registration is
 * retired, its consumer freed once they have returned. Caller holds
 * event_mutex.
 */
static void unregister_probe(struct trace_uprobe *tu)
{
	struct tu_reg *reg = tu->reg;

	lockdep_assert_held(&event_mutex);
	if (!reg)
		return;
	/* the core frees the probe with its last consumer: keep its counts */
	reg->held = uprobe_stats_hold(tu->inode, tu->offset);
	reg->cookie = uprobe_unregister_nosync(tu->inode, tu->offset,
					       &reg->consumer);
	list_add(&reg->node, &tu->retired);
	tu->reg = NULL;
}

/* Register every probe of @tp's event; all or none. */
static int register_event_probes(struct trace_probe *tp)
{
	struct trace_uprobe *tu, *undo;
	int ret;

	list_for_each_entry(tu, trace_probe_probe_list(tp), tp.list) {
		ret = register_probe(tu);
		if (ret)
			goto unregister_done;
	}
	return 0;

unregister_done:
	list_for_each_entry(undo, trace_probe_probe_list(tp), tp.list) {
		if (undo == tu)
			break;
		unregister_probe(undo);
	}
	return ret;
}

static void unregister_event_probes(struct trace_probe *tp)
{
	struct trace_uprobe *tu;

	list_for_each_entry(tu, trace_probe_probe_list(tp), tp.list)
		unregister_probe(tu);
}

/* The filter changed: install (@add) or remove breakpoints to match it. */
static int apply_event_probes(struct trace_probe *tp, bool add)
{
	struct trace_uprobe *tu;
	int ret, err = 0;

	list_for_each_entry(tu, trace_probe_probe_list(tp), tp.list) {
		if (!tu->reg)
			continue;
		ret = uprobe_apply(tu->inode, tu->offset, &tu->reg->consumer,
				   add);
		if (ret && !err)
			err = ret;
	}
	return err;
}

/*
 * Enable the event for trace @file, or for perf (@file NULL). Registering
 * the probes happens on the first user; a trace file added to a perf-only
 * event widens the filter to every mm.
 */
static int event_enable(struct trace_event_call *call,
			struct trace_event_file *file)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);
	bool was_enabled, had_trace;
	int ret;

	lockdep_assert_held(&event_mutex);
	if (WARN_ON_ONCE(!tp))
		return -ENODEV;
	was_enabled = trace_probe_is_enabled(tp);
	had_trace = trace_probe_test_flag(tp, TP_FLAG_TRACE);
	if (file) {
		ret = trace_probe_add_file(tp, file);
		if (ret)
			return ret;
	} else {
		/*
		 * perf allocated call->perf_events before this call: the
		 * flag's release store publishes it. Pairs with the acquire
		 * load of the flags in perf_on_this_cpu() and
		 * record_to_perf().
		 */
		trace_probe_set_flag(tp, TP_FLAG_PROFILE);
	}

	if (!was_enabled)
		ret = register_event_probes(tp);
	else if (file && !had_trace)
		ret = apply_event_probes(tp, true);
	else
		ret = 0;
	if (!ret)
		return 0;

	if (file)
		trace_probe_remove_file(tp, file);
	else
		trace_probe_clear_flag(tp, TP_FLAG_PROFILE);
	if (was_enabled && !had_trace)
		apply_event_probes(tp, false);
	return ret;
}

static int event_disable(struct trace_event_call *call,
			 struct trace_event_file *file)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);

	lockdep_assert_held(&event_mutex);
	if (WARN_ON_ONCE(!tp))
		return -ENODEV;
	if (file) {
		if (!trace_probe_get_file_link(tp, file))
			return -ENOENT;
		/* Clears TP_FLAG_TRACE with the last file. */
		trace_probe_remove_file(tp, file);
		files_gp = get_state_synchronize_rcu();
		if (trace_probe_test_flag(tp, TP_FLAG_TRACE))
			return 0;
	} else {
		/*
		 * perf frees call->perf_events after an RCU grace period
		 * (tracepoint_synchronize_unregister()): handlers use it only
		 * in an RCU section that finds this flag still set, so none
		 * needs waiting for here.
		 */
		trace_probe_clear_flag(tp, TP_FLAG_PROFILE);
		if (trace_probe_test_flag(tp, TP_FLAG_TRACE))
			return 0;	/* the probes stay for the trace files */
	}
	if (trace_probe_is_enabled(tp))
		apply_event_probes(tp, false);	/* perf targets only now */
	else
		unregister_event_probes(tp);
	return 0;
}

#ifdef CONFIG_PERF_EVENTS
/*
 * Does anything but perf event @event want the event in @event's process?
 * Then @event coming or going changes no breakpoint.
 */
static bool target_covered(struct trace_uprobe *tu, struct perf_event *event)
{
	struct mm_struct *mm;

	if (trace_probe_test_flag(&tu->tp, TP_FLAG_TRACE))
		return true;
	mm = event->hw.target ? READ_ONCE(event->hw.target->mm) : NULL;
	return mm && tu_perf_wants(tu, mm);
}

static void free_tu_target(struct rcu_head *head)
{
	struct tu_target *pt = container_of(head, struct tu_target, rcu);

	put_task_struct(pt->task);
	kfree(pt);
}

/*
 * Add @event's target to the event's filter (@join), or take it out. Only
 * a join can fail (-ENOMEM).
 */
static int update_targets(struct trace_uprobe *tu, struct perf_event *event,
			  bool join)
{
	struct trace_uprobe_filter *filter = tu_event_filter(tu);
	struct tu_target *pt, *found = NULL;

	lockdep_assert_held(&event_mutex);
	if (!event->hw.target) {
		write_lock(&filter->rwlock);
		WRITE_ONCE(filter->nr_systemwide,
			   filter->nr_systemwide + (join ? 1 : -1));
		write_unlock(&filter->rwlock);
		return 0;
	}
	if (join) {
		pt = kmalloc(sizeof(*pt), GFP_KERNEL);
		if (!pt)
			return -ENOMEM;
		pt->event = event;
		pt->task = get_task_struct(event->hw.target);
		write_lock(&filter->rwlock);
		list_add_rcu(&pt->node, &filter->perf_events);
		write_unlock(&filter->rwlock);
		return 0;
	}
	write_lock(&filter->rwlock);
	list_for_each_entry(pt, &filter->perf_events, node) {
		if (pt->event == event) {
			found = pt;
			list_del_rcu(&pt->node);
			break;
		}
	}
	write_unlock(&filter->rwlock);
	if (!WARN_ON_ONCE(!found))
		call_rcu(&found->rcu, free_tu_target);
	return 0;
}

/*
 * A perf event starts (@open) or stops using the event: change the filter
 * and, unless another user already covers its process, the breakpoints.
 */
static int perf_target(struct trace_event_call *call, struct perf_event *event,
		       bool open)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);
	struct trace_uprobe *tu;
	bool covered;
	int ret;

	lockdep_assert_held(&event_mutex);
	if (WARN_ON_ONCE(!tp))
		return -ENODEV;
	tu = tu_from_tp(tp);
	if (open) {
		covered = target_covered(tu, event);
		ret = update_targets(tu, event, true);
		if (ret)
			return ret;
	} else {
		update_targets(tu, event, false);
		covered = target_covered(tu, event);
	}
	if (covered)
		return 0;
	ret = apply_event_probes(tp, open);
	if (ret && open) {
		/* perf calls no PERF_CLOSE for an event whose open failed */
		update_targets(tu, event, false);
		apply_event_probes(tp, false);
	}
	return ret;
}
#endif

static int event_reg(struct trace_event_call *call,
		     enum trace_reg type, void *data)
{
	switch (type) {
	case TRACE_REG_REGISTER:
		return event_enable(call, data);
	case TRACE_REG_UNREGISTER:
		return event_disable(call, data);
#ifdef CONFIG_PERF_EVENTS
	case TRACE_REG_PERF_REGISTER:
		return event_enable(call, NULL);
	case TRACE_REG_PERF_UNREGISTER:
		return event_disable(call, NULL);
	case TRACE_REG_PERF_OPEN:
		return perf_target(call, data, true);
	case TRACE_REG_PERF_CLOSE:
		return perf_target(call, data, false);
#endif
	default:
		return 0;
	}
}

/* ------------------------------------------------------------ the event */

static void init_event_call(struct trace_uprobe *tu)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);

	tu_set_record_format(call);
	call->flags = TRACE_EVENT_FL_UPROBE | TRACE_EVENT_FL_CAP_ANY;
	call->class->reg = event_reg;
}

/* ------------------------------------------------ definition and deletion */

/* @name, when it names a regular file: -ENOENT, -EINVAL or 0 and @path. */
static int lookup_file(const char *name, struct path *path)
{
	int ret = kern_path(name, LOOKUP_FOLLOW, path);

	if (ret)
		return ret;
	if (d_is_reg(path->dentry))
		return 0;
	path_put(path);
	return -EINVAL;
}

/*
 * A probe of @path:@offset (counter at @ref_ctr_offset) with room for
 * @nargs arguments, in a new event @group/@event. It takes over @path and
 * @filename, also when it fails.
 */
static struct trace_uprobe *tu_alloc(const char *group, const char *event,
				     int nargs, bool is_ret, struct path *path,
				     char *filename, unsigned long offset,
				     unsigned long ref_ctr_offset)
{
	struct trace_uprobe *tu;
	int ret = -ENOMEM;

	tu = kzalloc(struct_size(tu, tp.args, nargs), GFP_KERNEL);
	if (!tu)
		goto put_path;
	tu->nhits = alloc_percpu(unsigned long);
	if (!tu->nhits)
		goto free_tu;
	ret = trace_probe_init(&tu->tp, event, group, true);
	if (ret)
		goto free_nhits;
	rwlock_init(&tu_event_filter(tu)->rwlock);
	INIT_LIST_HEAD(&tu_event_filter(tu)->perf_events);
	tu->is_ret = is_ret;
	INIT_LIST_HEAD(&tu->retired);
	dyn_event_init(&tu->devent, &uprobe_dyn_ops);
	tu->path = *path;
	tu->inode = d_real_inode(path->dentry);
	tu->filename = filename;
	tu->offset = offset;
	tu->ref_ctr_offset = ref_ctr_offset;
	return tu;

free_nhits:
	free_percpu(tu->nhits);
free_tu:
	kfree(tu);
put_path:
	path_put(path);
	kfree(filename);
	return ERR_PTR(ret);
}

/* Arguments parsed: what the hit path needs, and the print format. */
static int tu_finish(struct trace_uprobe *tu)
{
	tu_prepare_fetch(tu);
	return traceprobe_set_print_fmt(&tu->tp, tu_is_ret(tu) ?
					PROBE_PRINT_RETURN : PROBE_PRINT_NORMAL);
}

/*
 * Free @tu, which no handler uses any more (the wait for retired
 * registrations is for perf's local events, whose last disable waited).
 * Caller holds event_mutex or owns @tu.
 */
static void tu_free(struct trace_uprobe *tu)
{
	if (!tu)
		return;
	wait_retired(tu, true);
	path_put(&tu->path);
	trace_probe_cleanup(&tu->tp);
	kfree(tu->filename);
	free_percpu(tu->nhits);
	kfree(tu);
}

/*
 * A deleted probe: once the handlers of its registrations have returned,
 * free it, and its event if it was the last probe of it. Runs without
 * event_mutex while it waits, so that a handler that takes long (a fetch
 * waiting for a page) holds up nothing else.
 */
static void tu_free_work(struct work_struct *work)
{
	struct trace_uprobe *tu = container_of(work, struct trace_uprobe,
					       free_work);

	wait_retired(tu, true);
	mutex_lock(&event_mutex);
	/* The event lives on with its other probes, or goes with this one. */
	if (!tu->owns_event)
		tu->tp.event = NULL;
	tu_free(tu);
	mutex_unlock(&event_mutex);
}

static struct trace_uprobe *find_event(const char *event,
				       const char *group)
{
	struct trace_uprobe *tu;
	struct dyn_event *pos;

	for_each_dyn_event(pos) {
		tu = dyn_uprobe_or_null(pos);
		if (tu && !strcmp(trace_probe_name(&tu->tp), event) &&
		    !strcmp(trace_probe_group_name(&tu->tp), group))
			return tu;
	}
	return NULL;
}

/* One instruction drives one counter: refuse another counter offset. */
static bool ref_ctr_conflicts(struct trace_uprobe *new)
{
	struct trace_uprobe *tu;
	struct dyn_event *pos;

	for_each_dyn_event(pos) {
		tu = dyn_uprobe_or_null(pos);
		if (tu && tu->inode == new->inode && tu->offset == new->offset &&
		    tu->ref_ctr_offset != new->ref_ctr_offset)
			return true;
	}
	return false;
}

static bool same_probe(struct trace_uprobe *a, struct trace_uprobe *b)
{
	int i;

	if (a->inode != b->inode || a->offset != b->offset ||
	    a->ref_ctr_offset != b->ref_ctr_offset ||
	    a->tp.nr_args != b->tp.nr_args)
		return false;
	for (i = 0; i < a->tp.nr_args; i++)
		if (strcmp(a->tp.args[i].comm, b->tp.args[i].comm))
			return false;
	return true;
}

/* An error about the whole definition (caret at its start). */
static void log_at_head(int err)
{
	trace_probe_log_set_index(0);
	__trace_probe_log_err(0, err);
}

/* Add @tu to the existing event of @to; registered now if it is enabled. */
static int join_event(struct trace_uprobe *tu, struct trace_uprobe *to)
{
	struct trace_probe *pos;
	int ret;

	ret = trace_probe_compare_arg_type(&tu->tp, &to->tp);
	if (ret) {
		/* the arguments start at index 2 */
		trace_probe_log_set_index(ret + 1);
		trace_probe_log_err(0, DIFF_ARG_TYPE);
		return -EEXIST;
	}
	list_for_each_entry(pos, trace_probe_probe_list(&to->tp), list) {
		if (same_probe(tu_from_tp(pos), tu)) {
			log_at_head(TP_ERR_SAME_PROBE);
			return -EEXIST;
		}
	}
	ret = trace_probe_append(&tu->tp, &to->tp);
	if (ret)
		return ret;
	if (trace_probe_is_enabled(&tu->tp)) {
		/* the core installs it where the event's filter wants it */
		ret = register_probe(tu);
		if (ret) {
			trace_probe_unlink(&tu->tp);
			return ret;
		}
	}
	dyn_event_add(&tu->devent, trace_probe_event_call(&tu->tp));
	return 0;
}

static int add_definition(struct trace_uprobe *tu)
{
	struct trace_uprobe *old;
	int ret;

	mutex_lock(&event_mutex);
	if (ref_ctr_conflicts(tu)) {
		ret = -EINVAL;
		goto unlock;
	}
	old = find_event(trace_probe_name(&tu->tp),
			 trace_probe_group_name(&tu->tp));
	if (old) {
		if (tu_is_ret(tu) != tu_is_ret(old)) {
			log_at_head(TP_ERR_DIFF_PROBE_TYPE);
			ret = -EEXIST;
		} else {
			ret = join_event(tu, old);
		}
		goto unlock;
	}
	init_event_call(tu);
	ret = trace_probe_register_event_call(&tu->tp);
	if (ret == -EEXIST)
		log_at_head(TP_ERR_EVENT_EXIST);
	else if (ret)
		pr_warn("cannot register event %s/%s: %d\n",
			trace_probe_group_name(&tu->tp),
			trace_probe_name(&tu->tp), ret);
	if (ret)
		goto unlock;
	dyn_event_add(&tu->devent, trace_probe_event_call(&tu->tp));
unlock:
	mutex_unlock(&event_mutex);
	return ret;
}

/*
 * Delete @tu; refused while its event is in use (unless it has siblings).
 * Nothing here waits for handlers: @tu (and its event, with the last probe)
 * is freed by tu_free_work() once they have returned.
 */
static int delete_definition(struct trace_uprobe *tu)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	int ret;

	lockdep_assert_held(&event_mutex);
	if (!trace_probe_has_sibling(&tu->tp)) {
		if (trace_probe_is_enabled(&tu->tp))
			return -EBUSY;
		if (trace_event_dyn_busy(call))
			return -EBUSY;
		/*
		 * A handler may still be in trace_hit()'s RCU section with a
		 * trace file it found before the disable; the files go next.
		 */
		cond_synchronize_rcu(files_gp);
		ret = trace_probe_unregister_event_call(&tu->tp);
		if (ret)
			return ret;
	}
	unregister_probe(tu);
	dyn_event_remove(&tu->devent);
	/* Off the event's probe list now; still pointing at the event. */
	tu->owns_event = list_is_singular(trace_probe_probe_list(&tu->tp));
	list_del_init(&tu->tp.list);
	INIT_WORK(&tu->free_work, tu_free_work);
	queue_work(system_long_wq, &tu->free_work);
	return 0;
}

/*
 * Parse "PATH:OFFSET[%return][(REF_CTR_OFFSET)]" (argv[1], in @spec, which
 * is modified) into @tu's offsets; *@is_ret is set by "%return". The path
 * part is left NUL-terminated at @spec. Error carets point into argv[1].
 */
static int parse_place(char *spec, unsigned long *offset,
		       unsigned long *ref_ctr_offset, bool *is_ret)
{
	char *colon, *open, *close, *pct;
	int ret;

	colon = strrchr(spec, ':');
	if (!colon || !isdigit(colon[1]))
		return -EINVAL;		/* not PATH:OFFSET: no log entry */
	*colon = '\0';

	open = strchr(colon + 1, '(');
	if (open) {
		close = strchr(open + 1, ')');
		if (!close) {
			trace_probe_log_err(colon + 1 - spec + strlen(colon + 1),
					    REFCNT_OPEN_BRACE);
			return -EINVAL;
		}
		*close = '\0';
		ret = kstrtoul(open + 1, 0, ref_ctr_offset);
		if (ret) {
			trace_probe_log_err(open + 1 - spec, BAD_REFCNT);
			return ret;
		}
		if (close[1] != '\0') {
			trace_probe_log_err(close + 1 - spec, BAD_REFCNT_SUFFIX);
			return -EINVAL;
		}
		*open = '\0';
	}

	pct = strchr(colon + 1, '%');
	if (pct) {
		if (strcmp(pct, "%return")) {
			trace_probe_log_err(pct - spec, BAD_ADDR_SUFFIX);
			return -EINVAL;
		}
		*pct = '\0';
		*is_ret = true;
	}

	ret = kstrtoul(colon + 1, 0, offset);
	if (ret) {
		trace_probe_log_err(colon + 1 - spec, BAD_UPROBE_OFFS);
		return ret;
	}
	return 0;
}

/*
 * Are @offset and the counter at @ref_ctr_offset inside the file at @path,
 * the counter 2-byte aligned? Checked when the probe is defined, so that
 * the error comes with its place; @offs_pos is the offset's position in
 * @spec (argv[1], unmodified), for the caret. The core checks the offset
 * again whenever it registers (the file may have been truncated since);
 * a counter past the end is then never raised.
 */
static int check_place(const struct path *path, const char *spec,
		       int offs_pos, unsigned long offset,
		       unsigned long ref_ctr_offset)
{
	loff_t size = i_size_read(d_inode(path->dentry));
	const char *ref = strchr(spec + offs_pos, '(');

	if (offset >= size) {
		trace_probe_log_err(offs_pos, BAD_UPROBE_OFFS);
		return -EINVAL;
	}
	if (ref && ((ref_ctr_offset & 1) || ref_ctr_offset + 2 > size)) {
		trace_probe_log_err(ref + 1 - spec, BAD_REFCNT);
		return -EINVAL;
	}
	return 0;
}

/*
 * "p_bash_0x4245c0": the name of an event defined without one, for return
 * probes too; the file's name is cut at its first '.', '-' or '_'
 * ("p_libc_0x29d90" for libc.so.6), as tracefs has always named them.
 */
static void default_event_name(char *buf, const char *path,
			       unsigned long offset)
{
	const char *base = kbasename(path);
	char *p;

	snprintf(buf, MAX_EVENT_NAME_LEN, "p_%.*s_0x%lx",
		 (int)strcspn(base, ".-_"), base, offset);
	for (p = buf; *p; p++)
		if (!isalnum(*p) && *p != '_')
			*p = '_';
}

static int define_from_argv(int argc, const char **argv)
{
	const char *event = NULL, *group = UPROBE_EVENT_SYSTEM;
	unsigned long offset = 0, ref_ctr_offset = 0;
	char buf[MAX_EVENT_NAME_LEN], gbuf[MAX_EVENT_NAME_LEN];
	struct trace_uprobe *tu;
	bool is_ret = false;
	struct path path;
	char *spec;
	int i, ret;

	switch (argv[0][0]) {
	case 'r':
		is_ret = true;
		break;
	case 'p':
		break;
	default:
		return -ECANCELED;
	}
	if (argc < 2 || (argv[0][1] != '\0' && argv[0][1] != ':'))
		return -ECANCELED;
	/* PATH:OFFSET has a '/' in PATH; else it is a kprobe's ("MOD:SYM") */
	if (argv[1][strcspn(argv[1], "/")] == '\0')
		return -ECANCELED;

	trace_probe_log_init("trace_uprobe", argc, argv);
	if (argc - 2 > MAX_TRACE_ARGS) {
		trace_probe_log_set_index(MAX_TRACE_ARGS + 2);
		trace_probe_log_err(0, EVENT_TOO_BIG);
		ret = -E2BIG;
		goto out;
	}
	trace_probe_log_set_index(1);
	spec = kstrdup(argv[1], GFP_KERNEL);
	if (!spec) {
		ret = -ENOMEM;
		goto out;
	}
	ret = parse_place(spec, &offset, &ref_ctr_offset, &is_ret);
	if (ret)
		goto free_spec;

	ret = lookup_file(spec, &path);
	if (ret == -EINVAL)
		trace_probe_log_err(0, NO_REGULAR_FILE);
	else if (ret)
		trace_probe_log_err(0, FILE_NOT_FOUND);
	if (ret)
		goto free_spec;
	ret = check_place(&path, argv[1], strlen(spec) + 1, offset,
			  ref_ctr_offset);
	if (ret)
		goto put_path;

	trace_probe_log_set_index(0);
	if (argv[0][1] == ':') {
		event = &argv[0][2];
		ret = traceprobe_parse_event_name(&event, &group, gbuf,
						  event - argv[0]);
		if (ret)
			goto put_path;
	}
	if (!event) {
		default_event_name(buf, spec, offset);
		event = buf;
	}

	tu = tu_alloc(group, event, argc - 2, is_ret, &path, spec, offset,
		      ref_ctr_offset);
	if (IS_ERR(tu)) {
		ret = PTR_ERR(tu);
		goto out;
	}

	for (i = 0; i < argc - 2; i++) {
		trace_probe_log_set_index(i + 2);
		ret = traceprobe_parse_probe_arg(&tu->tp, i, argv[i + 2],
						 is_ret ? TPARG_FL_RETURN : 0);
		if (ret)
			goto free_tu;
	}
	ret = tu_finish(tu);
	if (ret < 0)
		goto free_tu;
	ret = add_definition(tu);
	if (!ret)
		goto out;

free_tu:
	tu_free(tu);
	goto out;
put_path:
	path_put(&path);
free_spec:
	kfree(spec);
out:
	trace_probe_log_clear();
	return ret;
}

static int dyn_define(const char *raw_command)
{
	return trace_probe_create(raw_command, define_from_argv);
}

/*
 * One line written to uprobe_events. dynevent parses "-:[GRP/]EVENT" for us
 * and serializes both kinds of line with dynamic_events under its ops mutex,
 * which also guards the shared error log. Its "no ops claimed the line"
 * (-ECANCELED) can only mean a malformed definition here.
 */
static int uprobe_events_line(const char *line)
{
	bool removal = line[0] == '-';
	int err;

	err = removal ? dyn_event_release(line, &uprobe_dyn_ops) :
			dyn_event_create(line, &uprobe_dyn_ops);
	return err == -ECANCELED && !removal ? -EINVAL : err;
}

static int dyn_delete(struct dyn_event *ev)
{
	return delete_definition(dyn_to_tu(ev));
}

static bool dyn_in_use(struct dyn_event *ev)
{
	return trace_probe_is_enabled(&dyn_to_tu(ev)->tp);
}

/*
 * Does "PATH:OFFSET[(REF)] ARGS..." of a deletion name @tu? The numbers
 * are compared as numbers, so any spelling of them matches.
 */
static bool match_command_head(struct trace_uprobe *tu, int argc,
			       const char **argv)
{
	unsigned long offset, ref = 0;
	char *spec, *open;
	bool match = false;
	size_t n;

	if (!argc)
		return true;
	/* PATH exactly, then ':' (a defined PATH is never empty) */
	n = str_has_prefix(argv[0], tu->filename);
	if (!n || argv[0][n] != ':')
		return false;
	spec = kstrdup(argv[0] + n + 1, GFP_KERNEL);
	if (!spec)
		return false;
	open = strchr(spec, '(');
	if (open) {
		*open++ = '\0';
		if (!strlen(open) || open[strlen(open) - 1] != ')')
			goto out;
		open[strlen(open) - 1] = '\0';
		if (kstrtoul(open, 0, &ref))
			goto out;
	}
	if (kstrtoul(spec, 0, &offset))
		goto out;
	match = offset == tu->offset && ref == tu->ref_ctr_offset &&
		trace_probe_match_command_args(&tu->tp, argc - 1, argv + 1);
out:
	kfree(spec);
	return match;
}

static bool dyn_matches(const char *system, const char *event,
			int argc, const char **argv,
			struct dyn_event *ev)
{
	struct trace_uprobe *tu = dyn_to_tu(ev);

	if (event[0] && strcmp(trace_probe_name(&tu->tp), event))
		return false;
	if (system && strcmp(trace_probe_group_name(&tu->tp), system))
		return false;
	return match_command_head(tu, argc, argv);
}

/* The canonical definition: "p:GRP/EVENT PATH:0x%016lx(0xREF) ARGS". */
static int dyn_show_definition(struct seq_file *m, struct dyn_event *ev)
{
	struct trace_uprobe *tu = dyn_to_tu(ev);
	int i;

	seq_printf(m, "%c:%s/%s %s:0x%0*lx", tu_is_ret(tu) ? 'r' : 'p',
		   trace_probe_group_name(&tu->tp), trace_probe_name(&tu->tp),
		   tu->filename, (int)(sizeof(void *) * 2), tu->offset);
	if (tu->ref_ctr_offset)
		seq_printf(m, "(0x%lx)", tu->ref_ctr_offset);
	for (i = 0; i < tu->tp.nr_args; i++)
		seq_printf(m, " %s=%s", tu->tp.args[i].name,
			   tu->tp.args[i].comm);
	seq_putc(m, '\n');
	return 0;
}

/* ------------------------------------------------------------ tracefs */

/*
 * The three tracefs files list the uprobe events, one probe per line; they
 * differ only in what a line shows and in whether writes define events. One
 * seq_file walk of dyn_event_list, under event_mutex, serves them all: a
 * file's &struct uprobe_list is its inode's private data.
 */

/**
 * struct uprobe_list - one tracefs file listing the probes
 * @name: the file's name in tracefs
 * @mode: its permissions
 * @defines: writes define and delete events (uprobe_events)
 * @header: printed before the probes, or NULL
 * @show: prints one probe
 */
struct uprobe_list {
	const char *name;
	umode_t mode;
	bool defines;
	const char *header;
	void (*show)(struct seq_file *m, struct trace_uprobe *tu);
};

static void list_definition(struct seq_file *m, struct trace_uprobe *tu)
{
	dyn_show_definition(m, &tu->devent);
}

/*
 * uprobe_profile, in its established format: "  PATH EVENT HITS". It shows
 * a disabled event's final count: it waits for the handlers that were
 * still running at the disable (hits that came before it, counted), as a
 * disable that waited for them would have.
 */
static void list_profile(struct seq_file *m, struct trace_uprobe *tu)
{
	wait_retired(tu, false);
	seq_printf(m, "  %s %-44s %15lu\n", tu->filename,
		   trace_probe_name(&tu->tp), tu_hits(tu));
}

/*
 * uprobe_stats: the event's hits and how the core handled the probed
 * instruction while the event was enabled (tu_stats()). A line ends in
 * " settling" while handlers that were running when the event was
 * disabled may still add to its counts; reads never wait for them.
 */
static void list_stats(struct seq_file *m, struct trace_uprobe *tu)
{
	struct uprobe_stats st;
	bool settling = tu_stats(tu, &st);

	seq_printf(m, "%s/%s %s:0x%lx %lu %llu %llu %llu %llu%s\n",
		   trace_probe_group_name(&tu->tp), trace_probe_name(&tu->tp),
		   tu->filename, tu->offset, tu_hits(tu),
		   st.emulated, st.stepped, st.boosted, st.missed,
		   settling ? " settling" : "");
}

static const struct uprobe_list uprobe_lists[] = {
	{ "uprobe_events", TRACE_MODE_WRITE, true, NULL, list_definition },
	{ "uprobe_profile", TRACE_MODE_READ, false, NULL, list_profile },
	{ "uprobe_stats", TRACE_MODE_READ, false,
	  "# GROUP/EVENT PATH:OFFSET HITS EMULATED STEPPED BOOSTED MISSED [settling]\n",
	  list_stats },
};

/* Position 0 is the list head itself: it stands for the header line. */
static void *list_start(struct seq_file *m, loff_t *pos)
{
	mutex_lock(&event_mutex);
	return *pos ? seq_list_start(&dyn_event_list, *pos - 1) :
		      &dyn_event_list;
}

static void *list_next(struct seq_file *m, void *v, loff_t *pos)
{
	return seq_list_next(v, &dyn_event_list, pos);
}

static void list_stop(struct seq_file *m, void *v)
{
	mutex_unlock(&event_mutex);
}

static int list_show(struct seq_file *m, void *v)
{
	const struct uprobe_list *list = m->private;
	struct dyn_event *ev = v;

	if (v == &dyn_event_list) {
		if (list->header)
			seq_puts(m, list->header);
	} else if (dyn_is_uprobe(ev)) {
		list->show(m, dyn_to_tu(ev));
	}
	return 0;
}

static const struct seq_operations list_seq_ops = {
	.start = list_start,
	.next = list_next,
	.stop = list_stop,
	.show = list_show,
};

static int list_open(struct inode *inode, struct file *file)
{
	const struct uprobe_list *list = inode->i_private;
	int ret;

	ret = security_locked_down(LOCKDOWN_TRACEFS);
	if (ret)
		return ret;
	/* "> uprobe_events" deletes every uprobe event first */
	if (list->defines && (file->f_mode & FMODE_WRITE) &&
	    (file->f_flags & O_TRUNC)) {
		ret = dyn_events_release_all(&uprobe_dyn_ops);
		if (ret)
			return ret;
	}
	ret = seq_open(file, &list_seq_ops);
	if (!ret)
		((struct seq_file *)file->private_data)->private =
			inode->i_private;
	return ret;
}

static ssize_t list_write(struct file *file, const char __user *buffer,
			  size_t count, loff_t *ppos)
{
	const struct uprobe_list *list = file_inode(file)->i_private;

	if (!list->defines)
		return -EINVAL;
	return trace_parse_run_command(file, buffer, count, ppos,
				       uprobe_events_line);
}

static const struct file_operations uprobe_list_fops = {
	.owner = THIS_MODULE,
	.open = list_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = seq_release,
	.write = list_write,
};

/* ------------------------------------------------ perf's local events */

#ifdef CONFIG_PERF_EVENTS
/**
 * create_local_trace_uprobe - an event for one perf_event_open(type=uprobe)
 * @name: path of the probed file
 * @offs: file offset of the probed instruction
 * @ref_ctr_offset: file offset of the SDT counter, 0 for none
 * @is_return: a return probe
 *
 * The event is not listed in tracefs; perf registers it and owns it until
 * destroy_local_trace_uprobe().
 *
 * Return: the event call, or an ERR_PTR().
 */
struct trace_event_call *
create_local_trace_uprobe(char *name, unsigned long offs,
			  unsigned long ref_ctr_offset, bool is_return)
{
	struct trace_uprobe *tu;
	struct path path;
	char *filename;
	int ret;

	ret = lookup_file(name, &path);
	if (ret)
		return ERR_PTR(ret);
	filename = kstrdup(name, GFP_KERNEL);
	if (!filename) {
		path_put(&path);
		return ERR_PTR(-ENOMEM);
	}
	tu = tu_alloc(UPROBE_EVENT_SYSTEM, "perf_local", 0, is_return, &path,
		      filename, offs, ref_ctr_offset);
	if (IS_ERR(tu))
		return ERR_CAST(tu);
	init_event_call(tu);
	ret = tu_finish(tu);
	if (ret < 0) {
		tu_free(tu);
		return ERR_PTR(ret);
	}
	return trace_probe_event_call(&tu->tp);
}

/**
 * destroy_local_trace_uprobe - free an event of create_local_trace_uprobe()
 * @event_call: the event, no longer registered by perf
 */
void destroy_local_trace_uprobe(struct trace_event_call *event_call)
{
	struct trace_probe *tp = trace_probe_primary_from_call(event_call);
	struct trace_uprobe *tu;

	if (WARN_ON_ONCE(!tp))
		return;
	/* Freed once its handlers have returned, without making perf wait. */
	tu = tu_from_tp(tp);
	tu->owns_event = true;
	INIT_WORK(&tu->free_work, tu_free_work);
	queue_work(system_long_wq, &tu->free_work);
}

/**
 * bpf_get_uprobe_info - describe the uprobe behind a perf event
 * @event: a perf event on a uprobe event (tracepoint or uprobe PMU)
 * @fd_type: BPF_FD_TYPE_UPROBE or BPF_FD_TYPE_URETPROBE
 * @filename: the probed file's path, as given
 * @probe_offset: the file offset
 * @probe_addr: 0: uprobes are placed by file offset
 * @perf_type_tracepoint: @event is a tracepoint-type perf event
 *
 * Return: 0, or -EINVAL when @event is not on a uprobe event.
 */
int bpf_get_uprobe_info(const struct perf_event *event, u32 *fd_type,
			const char **filename, u64 *probe_offset,
			u64 *probe_addr, bool perf_type_tracepoint)
{
	struct trace_probe *tp;
	struct trace_uprobe *tu;

	if (!event->tp_event || !(event->tp_event->flags & TRACE_EVENT_FL_UPROBE))
		return -EINVAL;
	tp = trace_probe_primary_from_call(event->tp_event);
	if (!tp)
		return -EINVAL;
	tu = tu_from_tp(tp);
	*fd_type = tu_is_ret(tu) ? BPF_FD_TYPE_URETPROBE :
				      BPF_FD_TYPE_UPROBE;
	*filename = tu->filename;
	*probe_offset = tu->offset;
	*probe_addr = 0;
	return 0;
}
#endif /* CONFIG_PERF_EVENTS */

static __init int uprobe_events_init(void)
{
	int i, ret;

	ret = dyn_event_register(&uprobe_dyn_ops);
	if (ret)
		return ret;
	ret = tracing_init_dentry();
	if (ret)
		return 0;
	for (i = 0; i < ARRAY_SIZE(uprobe_lists); i++)
		trace_create_file(uprobe_lists[i].name, uprobe_lists[i].mode,
				  NULL, (void *)&uprobe_lists[i],
				  &uprobe_list_fops);
	return 0;
}
fs_initcall(uprobe_events_init);
