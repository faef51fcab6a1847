// Thin wrappers over futex(2) on 32-bit words in memory shared between processes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace tiercc::futex {

/// Sleeps while *word == expected, at most `timeout`; returns early on wake or signal.
void waitWhile(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::chrono::milliseconds timeout);
/// Wakes every waiter on word.
void wakeAll(std::atomic<std::uint32_t>* word);

}  // namespace tiercc::futex
