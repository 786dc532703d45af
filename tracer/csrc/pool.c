/* The thread pool of `parallel=True` code: see pool.h. */
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#define MAX_THREADS 256
#define CHUNKS_PER_THREAD 4

typedef struct {
    pool_body body;
    void *ctx;
    int64_t n, chunks, chunk_size;
    int64_t next;               /* the next chunk to take (atomic) */
    int64_t done;               /* chunks finished (atomic) */
    int32_t status[MAX_THREADS * CHUNKS_PER_THREAD];
} Job;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;        /* the fields below */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;          /* a new job for the workers */
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;      /* a job's last worker left it */
static pthread_mutex_t owner = PTHREAD_MUTEX_INITIALIZER;       /* held by the caller of a job */
static Job *job;                /* the job running, or NULL */
static uint64_t generation;     /* counts jobs: a worker takes each once */
static int working;             /* workers inside the current job */
static int threads = 0;         /* the pool's size, the caller included (0: not decided yet) */
static int started = 0;         /* workers started */

static void
run_chunks(Job *j)
{
    for (;;) {
        int64_t c = __atomic_fetch_add(&j->next, 1, __ATOMIC_ACQ_REL);
        if (c >= j->chunks) {
            return;
        }
        int64_t lo = c * j->chunk_size;
        int64_t hi = lo + j->chunk_size < j->n ? lo + j->chunk_size : j->n;
        j->status[c] = j->body(j->ctx, lo, hi);
        __atomic_fetch_add(&j->done, 1, __ATOMIC_ACQ_REL);
    }
}

static void *
worker(void *unused)
{
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    uint64_t seen = 0;          /* a job running now is joined at once */
    pthread_mutex_lock(&lock);
    for (;;) {
        while (generation == seen || job == NULL) {
            if (job == NULL) {
                seen = generation;
            }
            pthread_cond_wait(&wake, &lock);
        }
        seen = generation;
        Job *j = job;
        working++;
        pthread_mutex_unlock(&lock);
        run_chunks(j);
        pthread_mutex_lock(&lock);
        if (--working == 0) {
            pthread_cond_signal(&finished);
        }
    }
    return NULL;
}

static int
default_threads(void)
{
    const char *text = getenv("TRACER_NUM_THREADS");
    if (text != NULL && atoi(text) > 0) {
        return atoi(text) < MAX_THREADS ? atoi(text) : MAX_THREADS;
    }
#ifdef CPU_COUNT
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0) {
        return CPU_COUNT(&cpus) < MAX_THREADS ? CPU_COUNT(&cpus) : MAX_THREADS;
    }
#endif
    return 1;
}

/* Start workers up to the pool's size (called by the owner); the workers that could be started. */
static int
start_workers(void)
{
    if (threads == 0) {
        threads = default_threads();
    }
    while (started < threads - 1) {
        pthread_t t;
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attributes, worker, NULL);
        pthread_attr_destroy(&attributes);
        if (rc != 0) {
            break;
        }
        started++;
    }
    return started;
}

static int32_t
pool_parallel_for(pool_body body, void *ctx, int64_t n, int64_t grain)
{
    if (n <= 0) {
        return 0;
    }
    if (grain < 1) {
        grain = 1;
    }
    if (n < 2 * grain || pthread_mutex_trylock(&owner) != 0) {
        return body(ctx, 0, n);             /* too little work, or the pool is busy */
    }
    int workers = start_workers();
    int64_t chunks = (int64_t)(workers + 1) * CHUNKS_PER_THREAD;
    if (chunks > n / grain) {
        chunks = n / grain;
    }
    if (workers == 0 || chunks < 2) {
        pthread_mutex_unlock(&owner);
        return body(ctx, 0, n);
    }
    Job j = {.body = body, .ctx = ctx, .n = n, .next = 0, .done = 0};
    j.chunk_size = (n + chunks - 1) / chunks;
    j.chunks = (n + j.chunk_size - 1) / j.chunk_size;
    pthread_mutex_lock(&lock);
    job = &j;
    generation++;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    run_chunks(&j);
    pthread_mutex_lock(&lock);
    job = NULL;                             /* no worker joins it now */
    while (working > 0) {
        pthread_cond_wait(&finished, &lock);
    }
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&owner);
    for (int64_t c = 0; c < j.chunks; c++) {
        if (j.status[c] != 0) {
            return j.status[c];
        }
    }
    return 0;
}

/* NumPy's pairwise sum on the pool, bit for bit the sum of one thread: the tree of halves
 * (n2 = n / 2 rounded down to a multiple of 8) is cut at its top levels into LEAVES, each summed
 * by the kernels' own pairwise sum (codegen.reductions), and the partial sums are added back up
 * the same tree.  Leaves run without polls for signals. */
#define MIN_LEAF (1 << 15)
#define MAX_LEAVES 64

typedef double (*pairwise_f64)(const char *data, int64_t n, int64_t stride, int32_t *interrupted);
typedef float (*pairwise_f32)(const char *data, int64_t n, int64_t stride, int32_t *interrupted);

/* A kernel's sum of a map computed as it goes (codegen.reductions.fused_sum): the elements lo..
 * lo + n of the map, summed; an element's failure noted in *failed, a signal handler's in
 * *interrupted. */
typedef double (*fused_f64)(void *ctx, int64_t lo, int64_t n, char *failed, int32_t *interrupted);
typedef float (*fused_f32)(void *ctx, int64_t lo, int64_t n, char *failed, int32_t *interrupted);

typedef struct {
    void *leaf;
    const char *data;
    int64_t stride;
    int64_t start[MAX_LEAVES], count[MAX_LEAVES];
    double f64[MAX_LEAVES];
    float f32[MAX_LEAVES];
    int is_f32;
    void *ctx;                      /* a fused sum's (leaf is then a fused_f64 or fused_f32) */
    char failed[MAX_LEAVES];
    int32_t interrupted[MAX_LEAVES];
} Sum;

static int64_t
half_of(int64_t n)
{
    int64_t half = n / 2;
    return half - half % 8;
}

/* The leaves of the tree under (start, n), `depth` levels down at most, in order. */
static void
cut(Sum *sum, int *leaves, int64_t start, int64_t n, int depth)
{
    if (depth == 0 || n <= 2 * MIN_LEAF || *leaves + 2 > MAX_LEAVES) {
        sum->start[*leaves] = start;
        sum->count[*leaves] = n;
        (*leaves)++;
        return;
    }
    int64_t half = half_of(n);
    cut(sum, leaves, start, half, depth - 1);
    cut(sum, leaves, start + half, n - half, depth - 1);
}

static double
join_f64(Sum *sum, int *next, int64_t n)
{
    if (sum->count[*next] == n) {          /* a leaf (a node cut further has smaller ones) */
        return sum->f64[(*next)++];
    }
    int64_t half = half_of(n);
    double first = join_f64(sum, next, half);
    return first + join_f64(sum, next, n - half);
}

static float
join_f32(Sum *sum, int *next, int64_t n)
{
    if (sum->count[*next] == n) {
        return sum->f32[(*next)++];
    }
    int64_t half = half_of(n);
    float first = join_f32(sum, next, half);
    return first + join_f32(sum, next, n - half);
}

static int32_t
sum_leaves(void *ctx, int64_t lo, int64_t hi)
{
    Sum *sum = ctx;
    for (int64_t i = lo; i < hi; i++) {
        if (sum->ctx != NULL) {
            if (sum->is_f32) {
                sum->f32[i] = ((fused_f32)sum->leaf)(sum->ctx, sum->start[i], sum->count[i], &sum->failed[i],
                                                     &sum->interrupted[i]);
            } else {
                sum->f64[i] = ((fused_f64)sum->leaf)(sum->ctx, sum->start[i], sum->count[i], &sum->failed[i],
                                                     &sum->interrupted[i]);
            }
            continue;
        }
        const char *data = sum->data + sum->start[i] * sum->stride;
        if (sum->is_f32) {
            sum->f32[i] = ((pairwise_f32)sum->leaf)(data, sum->count[i], sum->stride, NULL);
        } else {
            sum->f64[i] = ((pairwise_f64)sum->leaf)(data, sum->count[i], sum->stride, NULL);
        }
    }
    return 0;
}

/* How deep to cut: leaves enough for CHUNKS_PER_THREAD each of the pool's threads. */
static int
sum_depth(void)
{
    int depth = 0;
    int size = threads > 0 ? threads : default_threads();
    while ((1 << depth) < size * CHUNKS_PER_THREAD && (1 << depth) < MAX_LEAVES) {
        depth++;
    }
    return depth;
}

static double
pool_pairwise_f64(pairwise_f64 leaf, const char *data, int64_t n, int64_t stride, int32_t *interrupted)
{
    if (n <= 2 * MIN_LEAF) {
        return leaf(data, n, stride, interrupted);
    }
    Sum sum = {.leaf = (void *)leaf, .data = data, .stride = stride, .is_f32 = 0};
    int leaves = 0, depth = sum_depth(), next = 0;
    cut(&sum, &leaves, 0, n, depth);
    pool_parallel_for(sum_leaves, &sum, leaves, 1);
    return join_f64(&sum, &next, n);
}

static float
pool_pairwise_f32(pairwise_f32 leaf, const char *data, int64_t n, int64_t stride, int32_t *interrupted)
{
    if (n <= 2 * MIN_LEAF) {
        return leaf(data, n, stride, interrupted);
    }
    Sum sum = {.leaf = (void *)leaf, .data = data, .stride = stride, .is_f32 = 1};
    int leaves = 0, depth = sum_depth(), next = 0;
    cut(&sum, &leaves, 0, n, depth);
    pool_parallel_for(sum_leaves, &sum, leaves, 1);
    return join_f32(&sum, &next, n);
}

/* A fused sum on the pool: the leaves of the same tree, each its elements computed and summed by
 * the kernel's function; the flags of every leaf gathered into the kernel's. */
static int
fused_leaves(Sum *sum, int64_t n, char *failed, int32_t *interrupted)
{
    int leaves = 0;
    cut(sum, &leaves, 0, n, sum_depth());
    pool_parallel_for(sum_leaves, sum, leaves, 1);
    for (int i = 0; i < leaves; i++) {
        *failed |= sum->failed[i];
        *interrupted |= sum->interrupted[i];
    }
    return leaves;
}

static double
pool_fused_sum_f64(fused_f64 leaf, void *ctx, int64_t n, char *failed, int32_t *interrupted)
{
    if (n <= 2 * MIN_LEAF) {
        return leaf(ctx, 0, n, failed, interrupted);
    }
    Sum sum = {.leaf = (void *)leaf, .ctx = ctx, .is_f32 = 0};
    int next = 0;
    fused_leaves(&sum, n, failed, interrupted);
    return join_f64(&sum, &next, n);
}

static float
pool_fused_sum_f32(fused_f32 leaf, void *ctx, int64_t n, char *failed, int32_t *interrupted)
{
    if (n <= 2 * MIN_LEAF) {
        return leaf(ctx, 0, n, failed, interrupted);
    }
    Sum sum = {.leaf = (void *)leaf, .ctx = ctx, .is_f32 = 1};
    int next = 0;
    fused_leaves(&sum, n, failed, interrupted);
    return join_f32(&sum, &next, n);
}

/* A forked child has none of the parent's workers (and maybe a lock the parent held). */
static void
forked_child(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_mutex_init(&owner, NULL);
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&finished, NULL);
    job = NULL;
    working = 0;
    started = 0;
}

static PyObject *
pool_set_num_threads(PyObject *module, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (n < 1 || n > MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "the number of threads must be from 1 to %d, not %ld", MAX_THREADS, n);
        return NULL;
    }
    int size = (int)n;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&owner);             /* no job is running */
    threads = size;                         /* (workers past it stay idle) */
    pthread_mutex_unlock(&owner);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *
pool_get_num_threads(PyObject *module, PyObject *unused)
{
    if (threads == 0) {
        threads = default_threads();
    }
    return PyLong_FromLong(threads);
}

static PyMethodDef pool_methods[] = {
    {"set_num_threads", pool_set_num_threads, METH_O,
     "set_num_threads(n)\n--\n\nThe threads parallel=True code runs on, the caller included."},
    {"get_num_threads", pool_get_num_threads, METH_NOARGS,
     "get_num_threads()\n--\n\nThe threads parallel=True code runs on (TRACER_NUM_THREADS, or the CPUs)."},
    {NULL, NULL, 0, NULL},
};

int
pool_module_init(PyObject *module)
{
    static int registered = 0;
    if (!registered) {
        if (pthread_atfork(NULL, NULL, forked_child) != 0) {
            PyErr_SetString(PyExc_RuntimeError, "pthread_atfork failed");
            return -1;
        }
        registered = 1;
    }
    if (PyModule_AddFunctions(module, pool_methods) < 0) {
        return -1;
    }
    PyObject *address = PyLong_FromVoidPtr((void *)(uintptr_t)&pool_parallel_for);
    if (address == NULL) {
        return -1;
    }
    int rc = PyModule_AddObjectRef(module, "parallel_for_address", address);
    Py_DECREF(address);
    if (rc < 0) {
        return rc;
    }
    address = PyLong_FromVoidPtr((void *)(uintptr_t)&pool_pairwise_f64);
    if (address == NULL) {
        return -1;
    }
    rc = PyModule_AddObjectRef(module, "parallel_sum_f64_address", address);
    Py_DECREF(address);
    if (rc < 0) {
        return rc;
    }
    address = PyLong_FromVoidPtr((void *)(uintptr_t)&pool_pairwise_f32);
    if (address == NULL) {
        return -1;
    }
    rc = PyModule_AddObjectRef(module, "parallel_sum_f32_address", address);
    Py_DECREF(address);
    if (rc < 0) {
        return rc;
    }
    address = PyLong_FromVoidPtr((void *)(uintptr_t)&pool_fused_sum_f64);
    if (address == NULL) {
        return -1;
    }
    rc = PyModule_AddObjectRef(module, "parallel_fused_sum_f64_address", address);
    Py_DECREF(address);
    if (rc < 0) {
        return rc;
    }
    address = PyLong_FromVoidPtr((void *)(uintptr_t)&pool_fused_sum_f32);
    if (address == NULL) {
        return -1;
    }
    rc = PyModule_AddObjectRef(module, "parallel_fused_sum_f32_address", address);
    Py_DECREF(address);
    return rc;
}
