// SIGUSR1 dumps every live communicator's flight recorder: `kill -USR1 <pid>` on a rank that
// seems stuck writes what it is doing, without stopping it. The handler only writes a byte to a
// pipe; a thread of tiercc's reads it and does the dumping. The handler is installed with the
// first communicator, and only if SIGUSR1 still has its default action (a program that handles
// SIGUSR1 itself keeps its handler).
#pragma once

#include <functional>

namespace tiercc {

/// Registers `dump` to be called (from tiercc's signal thread) on SIGUSR1; returns a handle.
int onDumpSignal(std::function<void()> dump);
/// Unregisters; after it returns, `dump` is not running and will not be called.
void offDumpSignal(int handle);

}  // namespace tiercc
