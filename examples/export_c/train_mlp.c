/* Trains the digits MLP with the training step write_digits.py exported (no Python here):
   reads build/digits.bin (the images, labels and initial weights), runs EPOCHS epochs of
   train_step (which updates W1, b1, W2, b2 in place) over the training images in a shuffled
   order, and prints per epoch the mean loss and the test accuracy from train_accuracy.

       train_mlp [EPOCHS [DATA_FILE [WEIGHTS_OUT]]]     (defaults: 12, digits.bin beside the program)

   With WEIGHTS_OUT it writes the final W1, b1, W2, b2 there (float64, C order). The shuffle is
   write_digits.epoch_order's (splitmix64 + Fisher-Yates), so train_ctypes.py can run the same
   training in Python and get the same weights, bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

static void *read_array(FILE *f, size_t n, size_t size, const char *path) {
    void *a = malloc(n * size + 1);
    if (a == NULL || fread(a, size, n, f) != n) {
        fprintf(stderr, "%s is too short\n", path);
        exit(1);
    }
    return a;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void shuffle(int64_t *order, int64_t n, uint64_t *state) {
    for (int64_t i = 0; i < n; i++) order[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(splitmix64(state) % (uint64_t)(i + 1));
        int64_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

static int failed(int status, const char *what) {
    if (status == TRAIN_OK) return 0;
    fprintf(stderr, "%s failed (%d): %s\n", what, status, train_last_error());
    return 1;
}

int main(int argc, char **argv) {
    int epochs = argc > 1 ? atoi(argv[1]) : 12;
    const double lr = 0.05;
    char path[4096];
    if (argc > 2) {
        snprintf(path, sizeof path, "%s", argv[2]);
    } else {        /* digits.bin beside the program */
        snprintf(path, sizeof path, "%s", argv[0]);
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, sizeof path - (slash ? (size_t)(slash + 1 - path) : 0), "digits.bin");
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s (run write_digits.py first)\n", path);
        return 1;
    }
    /* n_train, n_test, n_in, n_hidden, n_out, shuffle seed; then the arrays (write_digits.write_data) */
    int64_t *head = read_array(f, 6, sizeof(int64_t), path);
    int64_t n_train = head[0], n_test = head[1], n_in = head[2], n_hidden = head[3], n_out = head[4];
    uint64_t state = (uint64_t)head[5];
    double *X_train = read_array(f, n_train * n_in, sizeof(double), path);
    int64_t *Y_train = read_array(f, n_train, sizeof(int64_t), path);
    double *X_test = read_array(f, n_test * n_in, sizeof(double), path);
    int64_t *Y_test = read_array(f, n_test, sizeof(int64_t), path);
    double *W1 = read_array(f, n_in * n_hidden, sizeof(double), path);
    double *b1 = read_array(f, n_hidden, sizeof(double), path);
    double *W2 = read_array(f, n_hidden * n_out, sizeof(double), path);
    double *b2 = read_array(f, n_out, sizeof(double), path);
    fclose(f);
    printf("%lld training images, %lld test images; MLP %lld-%lld-%lld, SGD lr %g, batch 1\n",
           (long long)n_train, (long long)n_test, (long long)n_in, (long long)n_hidden, (long long)n_out, lr);

    /* shapes; NULL strides: C order. The step writes the new weights into W1, b1, W2, b2. */
    int64_t W1_shape[2] = {n_in, n_hidden}, b1_shape[1] = {n_hidden};
    int64_t W2_shape[2] = {n_hidden, n_out}, b2_shape[1] = {n_out};
    int64_t x_shape[1] = {n_in}, X_test_shape[2] = {n_test, n_in}, Y_test_shape[1] = {n_test};
    int64_t *order = malloc((size_t)n_train * sizeof(int64_t));
    double accuracy = 0.0;
    for (int epoch = 1; epoch <= epochs; epoch++) {
        shuffle(order, n_train, &state);
        double total = 0.0;
        for (int64_t k = 0; k < n_train; k++) {
            int64_t i = order[k];
            double loss;
            if (failed(train_step(W1, W1_shape, NULL, b1, b1_shape, NULL, W2, W2_shape, NULL, b2, b2_shape, NULL,
                                  X_train + i * n_in, x_shape, NULL, Y_train[i], lr, &loss), "train_step"))
                return 1;
            total += loss;
        }
        if (failed(train_accuracy(W1, W1_shape, NULL, b1, b1_shape, NULL, W2, W2_shape, NULL, b2, b2_shape, NULL,
                                  X_test, X_test_shape, NULL, Y_test, Y_test_shape, NULL, &accuracy), "train_accuracy"))
            return 1;
        printf("epoch %2d: loss %.6f  test accuracy %6.2f%%\n", epoch, total / (double)n_train, 100.0 * accuracy);
    }
    if (argc > 3) {
        FILE *out = fopen(argv[3], "wb");
        if (out == NULL || fwrite(W1, sizeof(double), n_in * n_hidden, out) != (size_t)(n_in * n_hidden) ||
            fwrite(b1, sizeof(double), n_hidden, out) != (size_t)n_hidden ||
            fwrite(W2, sizeof(double), n_hidden * n_out, out) != (size_t)(n_hidden * n_out) ||
            fwrite(b2, sizeof(double), n_out, out) != (size_t)n_out || fclose(out) != 0) {
            fprintf(stderr, "cannot write %s\n", argv[3]);
            return 1;
        }
    }
    free(head); free(X_train); free(Y_train); free(X_test); free(Y_test);
    free(W1); free(b1); free(W2); free(b2); free(order);
    return 0;
}
