/*
 * aux_protocol.pml -- Promela model of the wavesched multi-stage
 * shared-capacity auxiliary protocol (SPEC section 3.3 / 3.4).
 *
 * One capacity owner (one auxiliary work) with capacity C and S stages.
 * Items are tracked by counts only: cnt[s][k] = number of live items parked in
 * stage s that may still make k more stage transitions (the per-item budget,
 * which makes "every run completes" a meaningful, finite property).
 *
 * Main work is abstracted as RUNS remaining main launches (see the modes
 * below).  Each loop iteration the scheduler observes the stage counts, then
 * the "selected main queue" is chosen nondeterministically: one of the P producers (bound b_p,
 * queued count n in 1..floor(C/b_p)) or, when OTHER is on, a non-producer main
 * launch (refill or a continuation with b = 0, n in 0..C).  The decision then
 * follows SPEC 3.4 exactly:
 *   B. admission  (selected queue non-empty and largest stage <= n):
 *        blocked iff n*b > C - L          (ENTRY_ONLY: n*b > C - q[0])
 *   C. forced drain: admission_stage() = first non-empty stage
 *   D. otherwise the largest stage runs iff its count > n (ties -> main)
 *   E. run the picked stage, or run the main launch (a producer publishes a
 *      nondeterministic number 0..n*b of items, each into any stage).
 * When no main work is left, the largest non-empty stage runs.
 *
 * A stage run consumes exactly its observed count: each consumed item either
 * terminates (frees its slot) or, if it has budget left, moves to any stage
 * (self-loop included) with one unit of budget less.  Items never clone.
 *
 * Two modes are explored in the same verification run (nondeterministic
 * choice at start): RUNS main launches and then no more main work, or an
 * endless supply of main work (runs_left never decreases), whose finite state
 * space covers every number of main launches.  -DNO_ENDLESS drops the latter.
 *
 * Properties (all checked by plain pan: assertions + invalid end states):
 *   (a) L <= C after every single publication/transition, and at every
 *       iteration boundary L == sum q[s] (the observed-total check of 3.4 A);
 *   (b) no deadlock: the only valid end state is "no main runs left and
 *       L == 0" (the final assert); any reachable state in which the scheduler
 *       cannot take a step is an invalid end state.  In particular a blocked
 *       producer facing an empty pool blocks the forced-drain search;
 *   (c) progress: every iteration that does not launch main work strictly
 *       decreases rank = sum over live items of (budget + 1).  Main launches
 *       are finite in the bounded mode, so every execution is finite and, with
 *       (b), ends in the done state; in the endless mode the scheduler can run
 *       at most C*(K+1) auxiliary dispatches in a row (main never starves).
 *
 * Parameters (pass with spin -D...): C, S, P (1 or 2), B1, B2, RUNS, K, OTHER.
 * -DENTRY_ONLY: stages registered as separate works (SPEC 3.6): admission sees
 *  only the entry stage count.  Spin must then find a violation of (a).
 * -DBROKEN_ADMIT=1: admission ignores L (n*b <= C);  =2: strict test
 *  (n*b < C - L).  Only used to show that the checker can fail.
 *
 * -DAPPEND: materializable storage (issue 18).  The client allocates by
 *  append: every publication takes the slot at the extent E (E++), a
 *  termination leaves a hole (E unchanged), so only a = C - E slots can be
 *  written although C - L are free.  Before admission is evaluated the
 *  client's prepare_for_admission() runs: with L == 0 it must reclaim the
 *  whole extent (E = 0, the progress rule), otherwise it may compact
 *  (E = L) or not -- chosen nondeterministically, so every client policy is
 *  covered.  Admission then also needs n*b <= a, and a producer blocked by
 *  storage alone forces a drain like one blocked by capacity.  Checked in
 *  addition: (d) E <= C after every publication (the storage never
 *  overflows) and L <= E <= C at every boundary (a <= C - L).
 *  -DIGNORE_AVAIL: the same client under today's protocol (admission sees
 *  only C - L): spin must find the storage overflowing (E > C).
 */

#ifndef C
#define C 2
#endif
#ifndef S
#define S 2
#endif
#ifndef P
#define P 1
#endif
#ifndef B1
#define B1 1
#endif
#ifndef B2
#define B2 B1
#endif
#ifndef RUNS
#define RUNS 4
#endif
#ifndef K
#define K 3
#endif
#ifndef OTHER
#define OTHER 1
#endif

#define KB   (K + 1)
#define IDX(s, k) ((s) * KB + (k))

#ifdef ENTRY_ONLY
#define OCC   q[0]          /* what admission believes is occupied */
#else
#define OCC   L
#endif

#if defined(APPEND) && !defined(IGNORE_AVAIL)
#define STORE(n, b)  ((n) * (b) <= C - E)   /* n*b <= a = C - E */
#else
#define STORE(n, b)  1
#endif

#if defined(BROKEN_ADMIT) && BROKEN_ADMIT == 1
#define ADMIT(n, b)  ((n) * (b) <= C)
#elif defined(BROKEN_ADMIT) && BROKEN_ADMIT == 2
#define ADMIT(n, b)  ((n) * (b) < C - OCC)
#else
#define ADMIT(n, b)  (OCC <= C && (n) * (b) <= C - OCC)
#endif

byte cnt[S * KB];     /* live items per (stage, remaining budget) */
byte q[S];            /* observed stage counts                    */
byte L;               /* live items owning a slot (incl. in-flight) */
byte E;               /* APPEND: the extent; slots [E, C) are writable */
byte runs_left = RUNS;
bool endless;         /* main work never runs out (chosen at start) */
bool done;

/* a producer launch publishes any number 0..max of new items (full budget K),
 * each into any stage; enumerated as per-stage amounts so that every
 * distinct outcome is generated exactly once */
inline publish(max)
{
	i = max;                        /* publications still allowed */
	t = 0;
	do
	:: t < S ->
		do
		:: i > 0 -> cnt[IDX(t, K)]++; q[t]++; L++; i--; assert(L <= C)
#ifdef APPEND
			; E++; assert(E <= C)   /* (d): the slot at the extent exists */
#endif
		:: break
		od;
		t++
	:: else -> break
	od
}

/* dispatch_stage(s): consume exactly q[s] items */
inline run_stage(s)
{
	assert(s < S && q[s] > 0);
	d_step {
	k = 0;
	do
	:: k <= K -> tmp[k] = cnt[IDX(s, k)]; cnt[IDX(s, k)] = 0; k++
	:: else -> break
	od;
	q[s] = 0                        /* consumed items still own their slot */
	};
	k = 0;
	do
	:: k <= K ->
		/* each consumed item moves to one stage t (self-loop allowed) with
		 * one unit of budget less, or terminates; never clones.  Enumerated
		 * as per-destination amounts (every distinct outcome once). */
		t = 0;
		do
		:: k > 0 && t < S ->
			do
			:: tmp[k] > 0 ->
				tmp[k]--; cnt[IDX(t, k - 1)]++; q[t]++; assert(L <= C)
			:: break
			od;
			t++
		:: else -> break
		od;
		L = L - tmp[k];                 /* the rest terminate: free slots */
		tmp[k] = 0;
		k++
	:: else -> break
	od
}

/* observe: largest stage (strictly greater wins -> lowest index), sum check,
 * ranking value */
inline observe()
{
	d_step {
	best = 0; maxq = 0; sum = 0; rank = 0; s = 0;
	do
	:: s < S ->
		if
		:: q[s] > maxq -> maxq = q[s]; best = s
		:: else -> skip
		fi;
		sum = sum + q[s];
		k = 0;
		do
		:: k <= K -> rank = rank + cnt[IDX(s, k)] * (k + 1); k++
		:: else -> break
		od;
		s++
	:: else -> break
	od;
	assert(L <= C);
	assert(sum == L)                /* 3.4 A: stage sum equals live count */
#ifdef APPEND
	; assert(L <= E && E <= C)      /* (d): a = C - E <= C - L */
#endif
	}
}

/* APPEND: prepare_for_admission(), before admission is evaluated */
inline prepare_admission()
{
#ifdef APPEND
	if
	:: L == 0 -> E = 0               /* reclaim the empty extent: a == C */
	:: L > 0 -> skip                 /* keep the holes */
	:: L > 0 -> E = L                /* compact */
	fi
#else
	skip
#endif
}

active proctype scheduler()
{
	byte s, t, k, i, p, n, b, nmax, best, maxq, sum;
	bool ran_main;
	short rank, rank0;
	byte tmp[KB];

	/* Two modes explored in one run: RUNS main launches then stop, or an
	 * endless supply of main work (covers every number of launches). */
	if
	:: endless = false
#ifndef NO_ENDLESS
	:: endless = true
#endif
	fi;
	do
	:: atomic {
		observe();
		rank0 = rank;
		if
		:: runs_left == 0 && L == 0 -> done = true; break
		:: runs_left == 0 && L > 0 ->
			/* all main queues empty: any non-empty stage runs (largest) */
			s = best;
			printf("MSC: no main work left: stage %d runs (q=%d, L=%d)\n", s, q[s], L);
			run_stage(s)
		:: runs_left > 0 ->
			/* select the main queue: producer p, or a non-producer launch */
			if
			:: p = 0
			:: P > 1 -> p = 1
			:: OTHER -> p = 2
			fi;
			if
			:: p == 0 -> b = B1; nmax = C / B1; n = 1
			:: p == 1 -> b = B2; nmax = C / B2; n = 1
			:: p == 2 -> b = 0;  nmax = C;      n = 0
			fi;
			do
			:: n < nmax -> n++
			:: break
			od;
			if
			:: n > 0 && maxq <= n && b > 0 -> prepare_admission()
			:: else -> skip
			fi;
			if
			:: n > 0 && maxq <= n && b > 0 && !(ADMIT(n, b) && STORE(n, b)) ->
				/* B+C: blocked -> forced drain of admission_stage() */
#ifdef ENTRY_ONLY
				s = 0;          /* the entry work has one stage   */
				q[s] > 0;       /* blocked work must be non-empty */
#else
				s = 0;
				do
				:: s < S && q[s] == 0 -> s++
				:: s < S && q[s] > 0 -> break
				od;             /* no non-empty stage: blocks => invalid end state */
#endif
				printf("MSC: producer %d n=%d b=%d blocked (L=%d): forced drain of stage %d (q=%d)\n", p, n, b, L, s, q[s]);
				run_stage(s)
			:: else ->
				if
				:: maxq > n ->          /* D: the largest stage wins */
					s = best;
					printf("MSC: stage %d (q=%d) beats main n=%d\n", s, q[s], n);
					run_stage(s)
				:: else ->              /* E: run the main launch */
					printf("MSC: main launch p=%d n=%d b=%d admitted (L=%d, q0=%d)\n", p, n, b, L, q[0]);
					publish(n * b);
					printf("MSC:   after publishing: L=%d\n", L);
					ran_main = true;
					if
					:: !endless -> runs_left--
					:: else -> skip
					fi
				fi
			fi
		fi;
		/* progress: lexicographic ranking strictly decreases */
		observe();
		assert(ran_main || rank < rank0);
		/* forget scratch values so that equal protocol states match */
		d_step {
			s = 0; t = 0; k = 0; i = 0; p = 0; n = 0; b = 0; nmax = 0;
			best = 0; maxq = 0; sum = 0; ran_main = false; rank = 0; rank0 = 0
		}
	   }
	od;
	assert(done && runs_left == 0 && L == 0)
}
