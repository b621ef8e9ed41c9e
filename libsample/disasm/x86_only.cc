// Capstone's x86 decoder alone in our programs.
//
// Debian's libcapstone.a holds every architecture Capstone decodes, and its
// cs.o names each one's entry points (<Arch>_global_init, <Arch>_option),
// so a static link pulls in every architecture's tables: 75,000 of
// sample-report's 82,000 relative relocations, which the dynamic loader
// writes into their pages at each start: `sample-report --version` took
// 12.5-15 ms of CPU on a 2-core VM, 7.5-8 ms without them (perf stat -r 40).
// We decode x86 alone (Disassembler::Open), so these definitions stand in
// for the other architectures' entry points: the linker takes them and
// leaves those members of the archive out, and cs_open of another
// architecture fails with CS_ERR_ARCH.
//
// Linked as an object, ahead of the archive (libsample_dep's link_whole).
// A Capstone whose entry points are named otherwise links as before, all
// architectures in; one that puts these names beside ones we need fails
// to link (duplicate definitions): never a silent change.
#include <capstone/capstone.h>

struct cs_struct;

#define SAMPLE_NO_CAPSTONE_ARCH(Arch)                                                   \
  extern "C" cs_err Arch##_global_init(cs_struct*) { return CS_ERR_ARCH; }            \
  extern "C" cs_err Arch##_option(cs_struct*, cs_opt_type, size_t) { return CS_ERR_ARCH; }

SAMPLE_NO_CAPSTONE_ARCH(ARM)
SAMPLE_NO_CAPSTONE_ARCH(AArch64)
SAMPLE_NO_CAPSTONE_ARCH(EVM)
SAMPLE_NO_CAPSTONE_ARCH(M680X)
SAMPLE_NO_CAPSTONE_ARCH(M68K)
SAMPLE_NO_CAPSTONE_ARCH(Mips)
SAMPLE_NO_CAPSTONE_ARCH(PPC)
SAMPLE_NO_CAPSTONE_ARCH(Sparc)
SAMPLE_NO_CAPSTONE_ARCH(SystemZ)
SAMPLE_NO_CAPSTONE_ARCH(TMS320C64x)
SAMPLE_NO_CAPSTONE_ARCH(XCore)
