#include <cdpkit/error.hpp>
#include <cdpkit/profiling/program.hpp>

#include <iostream>

namespace cdpkit::profiling {

int run_program(const char* name, const std::function<bool()>& body) {
  try {
    if (body()) return 0;
    std::cerr << name << ": a result check FAILED (see the check column)\n";
    return 1;
  } catch (const input_error& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 2;
  } catch (const cuda_error& e) {
    std::cerr << name << ": CUDA error: " << e.what() << "\n";
    return 3;
  }
}

}  // namespace cdpkit::profiling
