// What the CPU this process runs on can execute, for code that picks a vector path at run time
// (the half-precision conversions' F16C, the solver's AVX2 messages). Read once from CPUID and,
// since both use the YMM registers, from XCR0: the OS must save those registers, or AVX code
// faults. Read directly rather than through __builtin_cpu_supports("f16c"), which clang 14 (the
// fuzz build's compiler) does not know. False off x86-64.
#ifndef ALPA_SUPPORT_CPU_FEATURES_H_
#define ALPA_SUPPORT_CPU_FEATURES_H_

namespace alpa {

bool CpuHasAvx2();
bool CpuHasF16c();

}  // namespace alpa

#endif  // ALPA_SUPPORT_CPU_FEATURES_H_
