/* Calls the library examples/export_c/export_model.py wrote: fma, its gradient, and the MLP forward
   on the batch stored in weights.bin, checked against the probabilities Python computed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static double *read_doubles(FILE *f, size_t n) {
    double *a = malloc(n * sizeof(double));
    if (a == NULL || fread(a, sizeof(double), n, f) != n) {
        fprintf(stderr, "weights.bin is too short\n");
        exit(1);
    }
    return a;
}

int main(int argc, char **argv) {
    double v, dx, dy, dz;
    if (model_fma(3.0, -1.0, 2.0, &v) != MODEL_OK) return 1;
    if (model_fma_grad(3.0, -1.0, 2.0, &v, &dx, &dy, &dz) != MODEL_OK) return 1;
    printf("fma(3, -1, 2) = %g; gradient (%g, %g, %g)\n", v, dx, dy, dz);

    /* weights.bin sits beside the program (or in the folder given) */
    char path[4096];
    if (argc > 1) {
        snprintf(path, sizeof path, "%s/weights.bin", argv[1]);
    } else {
        snprintf(path, sizeof path, "%s", argv[0]);
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, sizeof path - (slash ? (size_t)(slash + 1 - path) : 0), "weights.bin");
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    enum { BATCH = 4 };
    double *W1 = read_doubles(f, 784 * 50), *b1 = read_doubles(f, 50);
    double *W2 = read_doubles(f, 50 * 10), *b2 = read_doubles(f, 10);
    double *x = read_doubles(f, BATCH * 784), *expected = read_doubles(f, BATCH * 10);
    fclose(f);

    int64_t W1_shape[2] = {784, 50}, b1_shape[1] = {50}, W2_shape[2] = {50, 10}, b2_shape[1] = {10};
    int64_t x_shape[2] = {BATCH, 784};
    model_f64_2d p;      /* the probabilities: p.data, p.shape; free with model_free(p.owner) */
    int status = model_mlp(W1, W1_shape, NULL, b1, b1_shape, NULL, W2, W2_shape, NULL, b2, b2_shape, NULL,
                           x, x_shape, NULL, &p);
    if (status != MODEL_OK) {
        fprintf(stderr, "model_mlp failed (%d): %s\n", status, model_last_error());
        return 1;
    }
    double worst = 0.0;
    for (int i = 0; i < BATCH * 10; i++) worst = fmax(worst, fabs(p.data[i] - expected[i]));
    printf("MLP forward: %lld x %lld probabilities; row 0 class 0..2: %.6f %.6f %.6f; "
           "max |C - Python| = %.1e\n", (long long)p.shape[0], (long long)p.shape[1],
           p.data[0], p.data[1], p.data[2], worst);
    model_free(p.owner);

    /* bad input is a status and a message, not a crash */
    x_shape[1] = 783;
    status = model_mlp(W1, W1_shape, NULL, b1, b1_shape, NULL, W2, W2_shape, NULL, b2, b2_shape, NULL,
                       x, x_shape, NULL, &p);
    printf("with 783 inputs per row: status %d (MODEL_SHAPE_MISMATCH is %d): %s\n", status,
           MODEL_SHAPE_MISMATCH, model_last_error());
    free(W1); free(b1); free(W2); free(b2); free(x); free(expected);
    return worst < 1e-12 && status == MODEL_SHAPE_MISMATCH ? 0 : 1;
}
