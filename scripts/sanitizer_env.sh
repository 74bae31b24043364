# Sourced by the sanitizer scripts: runtime options for ASan, UBSan, LSan and TSan.
# UBSan stops at the first report; suppressions cover code we do not build
# (libtorch, its OpenMP runtime, Link Grammar), never ours.
_san_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:allocator_may_return_null=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$_san_root/tools/sanitizers/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:suppressions=$_san_root/tools/sanitizers/ubsan.supp}"
# ignore_noninstrumented_modules: libtorch calls memcpy from its OpenMP worker threads,
# whose barriers TSan cannot see (libgomp is not instrumented).
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$_san_root/tools/sanitizers/tsan.supp}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer || true)}"
# libtorch's OpenMP threads are not instrumented: one thread keeps TSan's view exact
# where nothing asks for more (encoders given --threads call torch::set_num_threads).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
unset _san_root
