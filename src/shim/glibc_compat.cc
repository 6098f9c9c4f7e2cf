// Keeps libppt_shim.so's symbol versions old (docs/shim.md, "Where it
// loads"). The C++ runtime is linked in statically, and its std::string
// exception classes pull in std::random_device, whose "arc4random" source
// refers to arc4random, a function glibc has only since 2.36 (Debian 12 and
// newer). The shim never makes a random_device; this definition, local to
// the library, satisfies the reference so that loading needs no
// GLIBC_2.36. It reads the kernel's generator like glibc's does.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

extern "C" __attribute__((visibility("hidden"))) uint32_t arc4random(void) {
  uint32_t value = 0;
  // getrandom(2) by number: the getrandom() wrapper is GLIBC_2.25.
  if (::syscall(SYS_getrandom, &value, sizeof value, 0) != static_cast<long>(sizeof value)) {
    value = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&value));
  }
  return value;
}
