// Folders removed whole when the process is ended by SIGINT, SIGTERM or
// SIGHUP (the handlers install_output_signal_handlers() installs, in
// output_file.h): what batch extracts an archive into, so that a CI timeout
// leaves no half-extracted artifact behind.
//
// The handler removes each registered tree with async-signal-safe calls only
// (openat, getdents64, unlinkat), never following a link, up to 32 levels
// deep, in passes until the folder itself is gone (another thread may still
// be writing into it).
#pragma once

#include <string>

namespace ppt {

// Registers `path` (which need not exist yet: register first, then create
// it, so no signal can come between). Returns a slot for
// unregister_signal_cleanup_dir, or -1 when all 16 slots are taken or the
// path is too long (then it is not removed on a signal).
int register_signal_cleanup_dir(const std::string& path);
void unregister_signal_cleanup_dir(int slot);

}  // namespace ppt
