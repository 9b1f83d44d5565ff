// SPDX-License-Identifier: GPL-2.0-only
/* wbt_core unit tests: classification of bios into kinds and queues. */
#include "test_helpers.h"

/* ---- classification ------------------------------------------------------ */

#define W WBT_F_WRITE
#define R WBT_F_READ

struct cls_case {
	unsigned int flags;
	enum wbt_kind kind;
};

static void check_cls(const struct cls_case *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECKF(wbt_classify(t[i].flags) == t[i].kind,
		       "flags 0x%x: kind %s, want %s", t[i].flags,
		       wbt_kind_name(wbt_classify(t[i].flags)),
		       wbt_kind_name(t[i].kind));
}

#define CHECK_CLS(...) do {						\
	static const struct cls_case t_[] = { __VA_ARGS__ };		\
	DO(check_cls(t_, sizeof(t_) / sizeof(t_[0])));			\
} while (0)

static void test_classify_read(void)
{
	CHECK_CLS({ R, WBT_K_READ },
		  { R | WBT_F_SYNC, WBT_K_READ },
		  { R | WBT_F_META | WBT_F_PRIO, WBT_K_READ },
		  { R | WBT_F_BACKGROUND, WBT_K_READ },
		  { R | WBT_F_SWAP | WBT_F_RECLAIMER, WBT_K_READ },
		  { R | WBT_F_SYNC | WBT_F_IDLE, WBT_K_READ });
}

static void test_classify_direct(void)
{
	CHECK_CLS({ W | WBT_F_SYNC | WBT_F_IDLE, WBT_K_DIRECT },
		  /* jbd2: REQ_META|REQ_SYNC|REQ_IDLE */
		  { W | WBT_F_SYNC | WBT_F_IDLE | WBT_F_META, WBT_K_DIRECT },
		  { W | WBT_F_SYNC | WBT_F_IDLE | WBT_F_FUA, WBT_K_DIRECT },
		  { W | WBT_F_SYNC | WBT_F_IDLE | WBT_F_BACKGROUND,
		    WBT_K_DIRECT });
}

static void test_classify_sync(void)
{
	CHECK_CLS({ W | WBT_F_SYNC, WBT_K_SYNC },
		  { W | WBT_F_META, WBT_K_SYNC },
		  { W | WBT_F_PRIO, WBT_K_SYNC },
		  { W | WBT_F_FUA, WBT_K_SYNC },
		  { W | WBT_F_SYNC | WBT_F_BACKGROUND, WBT_K_SYNC },
		  { W | WBT_F_META | WBT_F_IDLE, WBT_K_SYNC },
		  { W | WBT_F_PREFLUSH | WBT_F_SYNC, WBT_K_SYNC });
}

static void test_classify_bg(void)
{
	CHECK_CLS({ W | WBT_F_BACKGROUND, WBT_K_BG },
		  { W | WBT_F_BACKGROUND | WBT_F_IDLE, WBT_K_BG });
}

static void test_classify_normal(void)
{
	CHECK_CLS({ W, WBT_K_NORMAL },
		  { W | WBT_F_IDLE, WBT_K_NORMAL },
		  /* a flush with data is a write */
		  { W | WBT_F_PREFLUSH, WBT_K_NORMAL });
}

static void test_classify_reclaim(void)
{
	CHECK_CLS({ W | WBT_F_SWAP, WBT_K_RECLAIM },
		  { W | WBT_F_RECLAIMER, WBT_K_RECLAIM },
		  { W | WBT_F_SWAP | WBT_F_SYNC | WBT_F_IDLE, WBT_K_RECLAIM },
		  { W | WBT_F_RECLAIMER | WBT_F_SYNC | WBT_F_IDLE,
		    WBT_K_RECLAIM },
		  { W | WBT_F_SWAP | WBT_F_BACKGROUND, WBT_K_RECLAIM },
		  { W | WBT_F_RECLAIMER | WBT_F_SYNC, WBT_K_RECLAIM });
}

static void test_classify_flush(void)
{
	CHECK_CLS({ W | WBT_F_PREFLUSH | WBT_F_EMPTY, WBT_K_FLUSH },
		  { W | WBT_F_PREFLUSH | WBT_F_EMPTY | WBT_F_SYNC |
		    WBT_F_IDLE, WBT_K_FLUSH },
		  { W | WBT_F_PREFLUSH | WBT_F_EMPTY | WBT_F_SWAP,
		    WBT_K_FLUSH },
		  { W | WBT_F_PREFLUSH | WBT_F_EMPTY | WBT_F_BACKGROUND,
		    WBT_K_FLUSH });
}

static void test_classify_discard(void)
{
	CHECK_CLS({ WBT_F_DISCARD, WBT_K_DISCARD },
		  { WBT_F_DISCARD | WBT_F_SYNC, WBT_K_DISCARD },
		  { WBT_F_DISCARD | WBT_F_SWAP, WBT_K_DISCARD });
}

static void test_classify_other(void)
{
	CHECK_CLS({ 0, WBT_K_OTHER },
		  { WBT_F_EMPTY, WBT_K_OTHER },
		  { WBT_F_SYNC, WBT_K_OTHER },	/* write zeroes, REQ_SYNC */
		  { WBT_F_PREFLUSH | WBT_F_EMPTY, WBT_K_OTHER },
		  { WBT_F_BACKGROUND | WBT_F_SWAP, WBT_K_OTHER });
}

/* The model of the header, written out, against every flag combination. */
static enum wbt_kind model_kind(unsigned int f)
{
	if (f & R)
		return WBT_K_READ;
	if (f & WBT_F_DISCARD)
		return WBT_K_DISCARD;
	if (!(f & W))
		return WBT_K_OTHER;
	if ((f & WBT_F_PREFLUSH) && (f & WBT_F_EMPTY))
		return WBT_K_FLUSH;
	if (f & (WBT_F_SWAP | WBT_F_RECLAIMER))
		return WBT_K_RECLAIM;
	if ((f & WBT_F_SYNC) && (f & WBT_F_IDLE))
		return WBT_K_DIRECT;
	if (f & (WBT_F_SYNC | WBT_F_META | WBT_F_PRIO | WBT_F_FUA))
		return WBT_K_SYNC;
	if (f & WBT_F_BACKGROUND)
		return WBT_K_BG;
	return WBT_K_NORMAL;
}

static void test_classify_all_combinations(void)
{
	unsigned int f;

	for (f = 0; f < (WBT_F_EMPTY << 1); f++)
		CHECKF(wbt_classify(f) == model_kind(f),
		       "flags 0x%x: kind %s, want %s", f,
		       wbt_kind_name(wbt_classify(f)),
		       wbt_kind_name(model_kind(f)));
}

static void test_kind_queue(void)
{
	static const enum wbt_queue want[WBT_NR_KINDS] = {
		[WBT_K_READ] = WBT_Q_NONE,
		[WBT_K_BG] = WBT_Q_BG,
		[WBT_K_NORMAL] = WBT_Q_NORMAL,
		[WBT_K_SYNC] = WBT_Q_SYNC,
		[WBT_K_RECLAIM] = WBT_Q_RECLAIM,
		[WBT_K_DIRECT] = WBT_Q_NONE,
		[WBT_K_DISCARD] = WBT_Q_DISCARD,
		[WBT_K_FLUSH] = WBT_Q_NONE,
		[WBT_K_OTHER] = WBT_Q_NONE,
	};
	int k;

	for (k = 0; k < WBT_NR_KINDS; k++)
		CHECKF(wbt_kind_queue(k) == want[k],
		       "kind %s: queue %s, want %s", wbt_kind_name(k),
		       wbt_queue_name(wbt_kind_queue(k)),
		       wbt_queue_name(want[k]));
	CHECK_EQ(wbt_kind_queue(WBT_NR_KINDS), WBT_Q_NONE);
}

/* Untracked kinds pass at once and never touch a counter. */
static void test_untracked_never_held(void)
{
	static const enum wbt_kind k[] = {
		WBT_K_READ, WBT_K_DIRECT, WBT_K_FLUSH, WBT_K_OTHER,
	};
	struct fx f;
	unsigned int i;

	DO(setup_opts(&f, 32, true, "depth", "1", NULL));
	CHECK_EQ(map_n(&f, WBT_K_SYNC, 1), 1);
	CHECK_EQ(map_n(&f, WBT_K_BG, 1), 0);	/* something is held */
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		CHECKF(map_n(&f, k[i], 100) == 100, "%s held",
		       wbt_kind_name(k[i]));
		CHECKF(!done(&f, k[i]), "%s completion kicks",
		       wbt_kind_name(k[i]));
	}
	CHECK_EQ(f.c.inflight[WBT_C_WB], 1);
	CHECK_EQ(f.c.inflight[WBT_C_RECLAIM], 0);
	CHECK_EQ(f.c.inflight[WBT_C_DISCARD], 0);
	CHECK_EQ(f.c.stats.kind[WBT_K_READ], 100);
	CHECK_EQ(f.c.stats.kind[WBT_K_FLUSH], 100);
}

static void test_names(void)
{
	int i, j;

	for (i = 0; i < WBT_NR_KINDS; i++)
		for (j = 0; j < i; j++)
			CHECK(strcmp(wbt_kind_name(i), wbt_kind_name(j)));
	CHECK_STR(wbt_kind_name(WBT_K_BG), "bg");
	CHECK_STR(wbt_kind_name(WBT_NR_KINDS), "?");
	CHECK_STR(wbt_queue_name(WBT_Q_BG), "bg");
	CHECK_STR(wbt_queue_name(WBT_Q_NONE), "none");
	CHECK_STR(wbt_wc_policy_name(WBT_WC_DELAY), "delay");
	CHECK_STR(wbt_wc_policy_name(WBT_NR_WC_POLICIES), "?");
}

static const struct test tests[] = {
	T(classify_read),
	T(classify_direct),
	T(classify_sync),
	T(classify_bg),
	T(classify_normal),
	T(classify_reclaim),
	T(classify_flush),
	T(classify_discard),
	T(classify_other),
	T(classify_all_combinations),
	T(kind_queue),
	T(untracked_never_held),
	T(names),
};

const struct suite classify_suite = SUITE(tests);
