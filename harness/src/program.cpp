// The programs' one error path: exit codes 0/1/2/3 and a one-line message with the program name.

#include <cdpkit/error.hpp>
#include <cdpkit/harness/program.hpp>
#include <cdpkit/schema/text.hpp>
#include <cdpkit/wait.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <typeinfo>

namespace cdpkit::harness {

namespace {
/// True for Thrust's exceptions (thrust::system_error, thrust's device bad_alloc), recognised by
/// their type's name: this host-only library does not include Thrust's headers.
bool from_thrust(const std::exception& e) {
  return std::string(typeid(e).name()).find("thrust") != std::string::npos;
}

[[noreturn]] void exit_now(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}
}  // namespace

CLI::Validator output_file(const std::string& kind, char first) {
  return CLI::Validator([kind, first](std::string& text) { return schema::output_refusal(text, kind, first); },
                        "FILE");
}

void check_output_file(const std::string& option, const std::string& path, const std::string& kind, char first) {
  std::string value = path;
  const std::string why = output_file(kind, first)(value);
  if (!why.empty()) throw input_error(option + ": " + why);
}

void apply_timeout_option(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e7)
    throw input_error("--timeout must be a number of seconds in (0, 1e7], got " +
                      std::to_string(seconds));
  set_wait_deadline(std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000))));
}

int run_program(const char* name, const std::function<bool()>& body) {
  try {
    if (body()) return 0;
    std::cerr << name << ": a result check FAILED (see the check column)\n";
    return 1;
  } catch (const input_error& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 2;
  } catch (const no_device_error& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 3;
  } catch (const cuda_error& e) {
    std::cerr << name << ": CUDA error: " << e.what() << "\n";
    if (device_unresponsive()) exit_now(3);
    return 3;
  } catch (const std::bad_alloc& e) {
    if (from_thrust(e)) {  // thrust::system::detail::bad_alloc: the *device* ran out
      std::cerr << name << ": CUDA error: out of device memory: " << e.what() << "\n";
      return 3;
    }
    std::cerr << name << ": out of host memory (the input or the sizes asked for are too large"
                         " for this machine)\n";
    return 2;
  } catch (const std::exception& e) {
    if (from_thrust(e)) {  // thrust::system_error: a CUDA call inside Thrust failed
      std::cerr << name << ": CUDA error: " << e.what() << "\n";
      return 3;
    }
    std::cerr << name << ": error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace cdpkit::harness
