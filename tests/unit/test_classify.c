// SPDX-License-Identifier: GPL-2.0-only
/* wbt_core unit tests: classification of bios into kinds and queues. */
#include "test_helpers.h"

/* ---- classification ------------------------------------------------------ */

#define W WTC_F_WRITE
#define R WTC_F_READ

struct cls_case {
	unsigned int flags;
	enum wtc_kind kind;
};

static void check_cls(const struct cls_case *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECKF(wtc_classify(t[i].flags) == t[i].kind,
		       "flags 0x%x: kind %s, want %s", t[i].flags,
		       wtc_kind_name(wtc_classify(t[i].flags)),
		       wtc_kind_name(t[i].kind));
}

#define CHECK_CLS(...) do {						\
	static const struct cls_case t_[] = { __VA_ARGS__ };		\
	DO(check_cls(t_, sizeof(t_) / sizeof(t_[0])));			\
} while (0)

static void test_classify_read(void)
{
	CHECK_CLS({ R, WTC_K_READ },
		  { R | WTC_F_SYNC, WTC_K_READ },
		  { R | WTC_F_META | WTC_F_PRIO, WTC_K_READ },
		  { R | WTC_F_BACKGROUND, WTC_K_READ },
		  { R | WTC_F_SWAP | WTC_F_RECLAIMER, WTC_K_READ },
		  { R | WTC_F_SYNC | WTC_F_IDLE, WTC_K_READ });
}

static void test_classify_direct(void)
{
	CHECK_CLS({ W | WTC_F_SYNC | WTC_F_IDLE, WTC_K_DIRECT },
		  /* jbd2: REQ_META|REQ_SYNC|REQ_IDLE */
		  { W | WTC_F_SYNC | WTC_F_IDLE | WTC_F_META, WTC_K_DIRECT },
		  { W | WTC_F_SYNC | WTC_F_IDLE | WTC_F_FUA, WTC_K_DIRECT },
		  { W | WTC_F_SYNC | WTC_F_IDLE | WTC_F_BACKGROUND,
		    WTC_K_DIRECT });
}

static void test_classify_sync(void)
{
	CHECK_CLS({ W | WTC_F_SYNC, WTC_K_SYNC },
		  { W | WTC_F_META, WTC_K_SYNC },
		  { W | WTC_F_PRIO, WTC_K_SYNC },
		  { W | WTC_F_FUA, WTC_K_SYNC },
		  { W | WTC_F_SYNC | WTC_F_BACKGROUND, WTC_K_SYNC },
		  { W | WTC_F_META | WTC_F_IDLE, WTC_K_SYNC },
		  { W | WTC_F_PREFLUSH | WTC_F_SYNC, WTC_K_SYNC });
}

static void test_classify_bg(void)
{
	CHECK_CLS({ W | WTC_F_BACKGROUND, WTC_K_BG },
		  { W | WTC_F_BACKGROUND | WTC_F_IDLE, WTC_K_BG });
}

static void test_classify_normal(void)
{
	CHECK_CLS({ W, WTC_K_NORMAL },
		  { W | WTC_F_IDLE, WTC_K_NORMAL },
		  /* a flush with data is a write */
		  { W | WTC_F_PREFLUSH, WTC_K_NORMAL });
}

static void test_classify_reclaim(void)
{
	CHECK_CLS({ W | WTC_F_SWAP, WTC_K_RECLAIM },
		  { W | WTC_F_RECLAIMER, WTC_K_RECLAIM },
		  { W | WTC_F_SWAP | WTC_F_SYNC | WTC_F_IDLE, WTC_K_RECLAIM },
		  { W | WTC_F_RECLAIMER | WTC_F_SYNC | WTC_F_IDLE,
		    WTC_K_RECLAIM },
		  { W | WTC_F_SWAP | WTC_F_BACKGROUND, WTC_K_RECLAIM },
		  { W | WTC_F_RECLAIMER | WTC_F_SYNC, WTC_K_RECLAIM });
}

static void test_classify_flush(void)
{
	CHECK_CLS({ W | WTC_F_PREFLUSH | WTC_F_EMPTY, WTC_K_FLUSH },
		  { W | WTC_F_PREFLUSH | WTC_F_EMPTY | WTC_F_SYNC |
		    WTC_F_IDLE, WTC_K_FLUSH },
		  { W | WTC_F_PREFLUSH | WTC_F_EMPTY | WTC_F_SWAP,
		    WTC_K_FLUSH },
		  { W | WTC_F_PREFLUSH | WTC_F_EMPTY | WTC_F_BACKGROUND,
		    WTC_K_FLUSH });
}

static void test_classify_discard(void)
{
	CHECK_CLS({ WTC_F_DISCARD, WTC_K_DISCARD },
		  { WTC_F_DISCARD | WTC_F_SYNC, WTC_K_DISCARD },
		  { WTC_F_DISCARD | WTC_F_SWAP, WTC_K_DISCARD });
}

static void test_classify_other(void)
{
	CHECK_CLS({ 0, WTC_K_OTHER },
		  { WTC_F_EMPTY, WTC_K_OTHER },
		  { WTC_F_SYNC, WTC_K_OTHER },	/* write zeroes, REQ_SYNC */
		  { WTC_F_PREFLUSH | WTC_F_EMPTY, WTC_K_OTHER },
		  { WTC_F_BACKGROUND | WTC_F_SWAP, WTC_K_OTHER });
}

/* The model of the header, written out, against every flag combination. */
static enum wtc_kind model_kind(unsigned int f)
{
	if (f & R)
		return WTC_K_READ;
	if (f & WTC_F_DISCARD)
		return WTC_K_DISCARD;
	if (!(f & W))
		return WTC_K_OTHER;
	if ((f & WTC_F_PREFLUSH) && (f & WTC_F_EMPTY))
		return WTC_K_FLUSH;
	if (f & (WTC_F_SWAP | WTC_F_RECLAIMER))
		return WTC_K_RECLAIM;
	if ((f & WTC_F_SYNC) && (f & WTC_F_IDLE))
		return WTC_K_DIRECT;
	if (f & (WTC_F_SYNC | WTC_F_META | WTC_F_PRIO | WTC_F_FUA))
		return WTC_K_SYNC;
	if (f & WTC_F_BACKGROUND)
		return WTC_K_BG;
	return WTC_K_NORMAL;
}

static void test_classify_all_combinations(void)
{
	unsigned int f;

	for (f = 0; f < (WTC_F_EMPTY << 1); f++)
		CHECKF(wtc_classify(f) == model_kind(f),
		       "flags 0x%x: kind %s, want %s", f,
		       wtc_kind_name(wtc_classify(f)),
		       wtc_kind_name(model_kind(f)));
}

static void test_kind_queue(void)
{
	static const enum wtc_queue want[WTC_NR_KINDS] = {
		[WTC_K_READ] = WTC_Q_NONE,
		[WTC_K_BG] = WTC_Q_BG,
		[WTC_K_NORMAL] = WTC_Q_NORMAL,
		[WTC_K_SYNC] = WTC_Q_SYNC,
		[WTC_K_RECLAIM] = WTC_Q_RECLAIM,
		[WTC_K_DIRECT] = WTC_Q_NONE,
		[WTC_K_DISCARD] = WTC_Q_DISCARD,
		[WTC_K_FLUSH] = WTC_Q_NONE,
		[WTC_K_OTHER] = WTC_Q_NONE,
	};
	int k;

	for (k = 0; k < WTC_NR_KINDS; k++)
		CHECKF(wtc_kind_queue(k) == want[k],
		       "kind %s: queue %s, want %s", wtc_kind_name(k),
		       wtc_queue_name(wtc_kind_queue(k)),
		       wtc_queue_name(want[k]));
	CHECK_EQ(wtc_kind_queue(WTC_NR_KINDS), WTC_Q_NONE);
}

/* Untracked kinds pass at once and never touch a counter. */
static void test_untracked_never_held(void)
{
	static const enum wtc_kind k[] = {
		WTC_K_READ, WTC_K_DIRECT, WTC_K_FLUSH, WTC_K_OTHER,
	};
	struct fx f;
	unsigned int i;

	DO(setup_opts(&f, 32, true, "depth", "1", NULL));
	CHECK_EQ(map_n(&f, WTC_K_SYNC, 1), 1);
	CHECK_EQ(map_n(&f, WTC_K_BG, 1), 0);	/* something is held */
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		CHECKF(map_n(&f, k[i], 100) == 100, "%s held",
		       wtc_kind_name(k[i]));
		CHECKF(!done(&f, k[i]), "%s completion kicks",
		       wtc_kind_name(k[i]));
	}
	CHECK_EQ(f.c.acct.inflight[WTC_C_WB], 1);
	CHECK_EQ(f.c.acct.inflight[WTC_C_RECLAIM], 0);
	CHECK_EQ(f.c.acct.inflight[WTC_C_DISCARD], 0);
	CHECK_EQ(f.c.stats.kind[WTC_K_READ], 100);
	CHECK_EQ(f.c.stats.kind[WTC_K_FLUSH], 100);
}

static void test_names(void)
{
	int i, j;

	for (i = 0; i < WTC_NR_KINDS; i++)
		for (j = 0; j < i; j++)
			CHECK(strcmp(wtc_kind_name(i), wtc_kind_name(j)));
	CHECK_STR(wtc_kind_name(WTC_K_BG), "bg");
	CHECK_STR(wtc_kind_name(WTC_NR_KINDS), "?");
	CHECK_STR(wtc_queue_name(WTC_Q_BG), "bg");
	CHECK_STR(wtc_queue_name(WTC_Q_NONE), "none");
	CHECK_STR(wtc_wc_policy_name(WTC_WC_DELAY), "delay");
	CHECK_STR(wtc_wc_policy_name(WTC_NR_WC_POLICIES), "?");
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
