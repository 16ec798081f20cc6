/* tests/test_dist_comm.c: the ranks' meeting points of multigpu/comm.c on the host, with ranks that
 * have no GPU (test hook gs_test_dist_threads): gs_dist_run starts and joins one thread per
 * rank and reports the lowest rank that failed on its own; gs_dist_barrier holds every rank
 * until all arrived, generation after generation; gs_dist_agree gives every rank the same
 * verdict; a rank that fails outside a vote, or calls gs_dist_fail, releases the ranks waiting
 * for it instead of leaving them to hang; a failed call leaves the ranks usable. Host suite. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "multigpu/dist_impl.h"
#include "tests/testutil.h"

static uint64_t g_rng;

typedef struct {
  int calls[GS_DIST_MAX_RANKS];
  int fail_rank[2];        /* ranks that vote a failure (-1: none) */
  gs_status_t fail_st[2];
  int quit_rank;           /* rank that returns an error without voting (-1: none) */
  int rounds;              /* barrier rounds */
  pthread_mutex_t lock;
  long counter;
  int bad_rounds;          /* rounds where a rank saw another count than everyone's arrival */
  gs_status_t verdict[GS_DIST_MAX_RANKS];
} job_t;

static gs_status_t vote_fn(gs_dist_rank_t *R, void *user)
{
  job_t *j = (job_t *)user;
  j->calls[R->rank]++;
  gs_status_t mine = GS_SUCCESS;
  for (int k = 0; k < 2; ++k)
    if (R->rank == j->fail_rank[k]) mine = GS_ERROR(j->fail_st[k], "boom %d", R->rank);
  if (R->rank == j->quit_rank) return GS_ERROR(GS_ERR_INTERNAL, "quit %d", R->rank);
  j->verdict[R->rank] = gs_dist_agree(R, mine);
  return j->verdict[R->rank];
}

static gs_status_t barrier_fn(gs_dist_rank_t *R, void *user)
{
  job_t *j = (job_t *)user;
  const int n = R->D->n;
  for (int k = 0; k < j->rounds; ++k) {
    pthread_mutex_lock(&j->lock);
    j->counter++;
    pthread_mutex_unlock(&j->lock);
    if (gs_dist_barrier(R) != 0) return GS_ERROR(GS_ERR_INTERNAL, "barrier broken");
    pthread_mutex_lock(&j->lock);
    const long c = j->counter;
    pthread_mutex_unlock(&j->lock);
    /* everyone has added round k's increment, nobody round k + 1's before the second meeting */
    if (c != (long)n * (k + 1)) j->bad_rounds++;
    if (gs_dist_barrier(R) != 0) return GS_ERROR(GS_ERR_INTERNAL, "barrier broken");
  }
  return GS_SUCCESS;
}

/* Rank quit_rank fails at once; the others wait at a barrier that only it could complete. */
static gs_status_t stuck_fn(gs_dist_rank_t *R, void *user)
{
  job_t *j = (job_t *)user;
  if (R->rank == j->quit_rank) {
    gs_dist_fail(R);
    return GS_ERROR(GS_ERR_DEVICE_MEMORY, "out of device memory on purpose");
  }
  if (gs_dist_barrier(R) != 0) return gs_dist_other_failed(R, GS_ERR_CUDA);
  return GS_SUCCESS;
}

static job_t *new_job(void)
{
  static job_t j;
  memset(&j, 0, sizeof j);
  j.fail_rank[0] = j.fail_rank[1] = -1;
  j.quit_rank = -1;
  pthread_mutex_init(&j.lock, NULL);
  return &j;
}

static void test_run_and_vote(void)
{
  for (int n = 1; n <= 8; ++n) {
    gs_dist_t *D = NULL;
    CU_ASSERT_FATAL(gs_test_dist_threads(&D, n) == GS_SUCCESS);
    job_t *j = new_job();
    /* everyone succeeds: each rank ran once */
    CU_ASSERT_EQUAL(gs_dist_run(D, vote_fn, j), GS_SUCCESS);
    for (int r = 0; r < n; ++r) {
      CU_ASSERT_EQUAL(j->calls[r], 1);
      CU_ASSERT_EQUAL(j->verdict[r], GS_SUCCESS);
    }
    /* one rank fails its vote (drawn at random): every rank's verdict is a failure, the call
     * returns that rank's status and names it */
    const int bad = (int)(gs_test_uniform(&g_rng) * n);
    j = new_job();
    j->fail_rank[0] = bad;
    j->fail_st[0] = GS_ERR_DEVICE_MEMORY;
    CU_ASSERT_EQUAL(gs_dist_run(D, vote_fn, j), GS_ERR_DEVICE_MEMORY);
    char want[64];
    snprintf(want, sizeof want, "rank %d (GPU -1): boom %d", bad, bad);
    CU_ASSERT(strstr(gs_last_error(), want) != NULL);
    for (int r = 0; r < n; ++r) CU_ASSERT_EQUAL(j->verdict[r], GS_ERR_DEVICE_MEMORY);
    /* two ranks fail with different statuses: the lower one is reported, everyone agrees */
    if (n >= 3) {
      j = new_job();
      j->fail_rank[0] = n - 1;
      j->fail_st[0] = GS_ERR_CUDA;
      j->fail_rank[1] = 1;
      j->fail_st[1] = GS_ERR_FORMAT_FILL;
      CU_ASSERT_EQUAL(gs_dist_run(D, vote_fn, j), GS_ERR_FORMAT_FILL);
      CU_ASSERT(strstr(gs_last_error(), "rank 1 ") != NULL);
      for (int r = 0; r < n; ++r)
        CU_ASSERT_EQUAL(j->verdict[r], r == n - 1 ? GS_ERR_CUDA : GS_ERR_FORMAT_FILL);
    }
    /* a rank that quits without voting: the others' vote fails instead of waiting for it, and
     * the call reports the quitter, not "another rank failed" */
    if (n >= 2) {
      j = new_job();
      j->quit_rank = (int)(gs_test_uniform(&g_rng) * n);
      CU_ASSERT_EQUAL(gs_dist_run(D, vote_fn, j), GS_ERR_INTERNAL);
      snprintf(want, sizeof want, "rank %d (GPU -1): quit %d", j->quit_rank, j->quit_rank);
      CU_ASSERT(strstr(gs_last_error(), want) != NULL);
      for (int r = 0; r < n; ++r)
        if (r != j->quit_rank) CU_ASSERT_NOT_EQUAL(j->verdict[r], GS_SUCCESS);
    }
    /* and the ranks work again afterwards */
    j = new_job();
    CU_ASSERT_EQUAL(gs_dist_run(D, vote_fn, j), GS_SUCCESS);
    gs_dist_destroy(&D);
    CU_ASSERT(D == NULL);
  }
}

static void test_barrier_generations(void)
{
  const int n = 2 + (int)(gs_test_uniform(&g_rng) * 6);
  gs_dist_t *D = NULL;
  CU_ASSERT_FATAL(gs_test_dist_threads(&D, n) == GS_SUCCESS);
  job_t *j = new_job();
  j->rounds = gs_test_quick() ? 200 : 2000;
  CU_ASSERT_EQUAL(gs_dist_run(D, barrier_fn, j), GS_SUCCESS);
  CU_ASSERT_EQUAL(j->counter, (long)n * j->rounds);
  CU_ASSERT_EQUAL(j->bad_rounds, 0);
  gs_dist_destroy(&D);
}

static void test_fail_releases_waiters(void)
{
  for (int n = 2; n <= 6; ++n) {
    gs_dist_t *D = NULL;
    CU_ASSERT_FATAL(gs_test_dist_threads(&D, n) == GS_SUCCESS);
    job_t *j = new_job();
    j->quit_rank = (int)(gs_test_uniform(&g_rng) * n);
    /* returns (no hang) with the failing rank's own status and message */
    CU_ASSERT_EQUAL(gs_dist_run(D, stuck_fn, j), GS_ERR_DEVICE_MEMORY);
    CU_ASSERT(strstr(gs_last_error(), "on purpose") != NULL);
    /* the host transport has no communicator to abort: the ranks stay usable */
    j = new_job();
    CU_ASSERT_EQUAL(gs_dist_run(D, vote_fn, j), GS_SUCCESS);
    gs_dist_destroy(&D);
  }
}

static void test_hook_refusals(void)
{
  gs_dist_t *D = NULL;
  CU_ASSERT_EQUAL(gs_test_dist_threads(&D, 0), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_test_dist_threads(&D, GS_DIST_MAX_RANKS + 1), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_test_dist_threads(NULL, 2), GS_ERR_INVALID_ARG);
  CU_ASSERT(D == NULL);
  gs_dist_destroy(&D); /* NULL-safe */
  gs_dist_destroy(NULL);
  /* transport names */
  CU_ASSERT_STRING_EQUAL(gs_dist_transport_string(GS_DIST_NCCL), "nccl");
  CU_ASSERT_EQUAL(gs_dist_transport_find("host"), GS_DIST_HOST);
  CU_ASSERT_EQUAL(gs_dist_transport_find("peer"), GS_DIST_PEER);
  CU_ASSERT_STRING_EQUAL(gs_dist_transport_string(GS_DIST_PEER), "peer");
  CU_ASSERT_STRING_EQUAL(gs_dist_transport_string((gs_dist_transport_t)4), "");
  CU_ASSERT_EQUAL(gs_dist_transport_find("pigeon"), -1);
  CU_ASSERT_STRING_EQUAL(gs_dist_transport_string((gs_dist_transport_t)7), "");
  /* creation times: NULL arguments refused; ranks made without contexts or NCCL took none */
  double c = -1, n = -1, p = -1;
  CU_ASSERT_EQUAL(gs_dist_create_times(NULL, &c, &n, &p), GS_ERR_INVALID_ARG);
  CU_ASSERT_FATAL(gs_test_dist_threads(&D, 2) == GS_SUCCESS);
  CU_ASSERT_EQUAL(gs_dist_create_times(D, NULL, &n, &p), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_dist_create_times(D, &c, NULL, &p), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_dist_create_times(D, &c, &n, NULL), GS_ERR_INVALID_ARG);
  CU_ASSERT_EQUAL(gs_dist_create_times(D, &c, &n, &p), GS_SUCCESS);
  CU_ASSERT(c == 0.0 && n == 0.0 && p == 0.0);
  gs_dist_destroy(&D);
}

int main(void)
{
  g_rng = gs_test_seed();
  CU_TestInfo tests[] = {{"run, vote: lowest failing rank reported, all agree", test_run_and_vote},
                         {"barrier: generations hold every rank", test_barrier_generations},
                         {"a failing rank releases the waiting ones", test_fail_releases_waiters},
                         {"hook refusals, transport names", test_hook_refusals},
                         CU_TEST_INFO_NULL};
  return gs_test_main("dist_comm", tests, 0);
}
