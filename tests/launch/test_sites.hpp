#pragma once
// The user sites the launch layer's cases launch and probe at: the first two ids past the
// library's own (cdpkit::sites::first_user_site).

#include <cdpkit/launch/sites.hpp>

#include <cstdint>

namespace {

constexpr std::uint16_t test_site = cdpkit::sites::first_user_site;
constexpr std::uint16_t probe_site = cdpkit::sites::first_user_site + 1;

}  // namespace
