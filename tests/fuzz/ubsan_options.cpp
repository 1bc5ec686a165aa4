// Linked into every fuzz target (cmake/fuzz.cmake): UBSan stops at the
// first finding (a crash libFuzzer keeps), except the one third-party report
// listed in tests/fuzz/ubsan.supp.
extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1:suppressions=" MG_FUZZ_UBSAN_SUPPRESSIONS;
}
