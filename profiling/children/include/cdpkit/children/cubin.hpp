#pragma once
// cdpkit/children/cubin.hpp — what the children collector reads from a loaded module's cubin (the
// ELF image the Compute Sanitizer API hands over at module load): its functions, which of them
// are kernels, and where each kernel's code launches which kernel from the device. Host C++ only;
// never throws on a malformed image (it says what could not be read instead).
//
// Where a launch goes is read from the relocations a device-linked cubin keeps (readelf -r): a
// kernel that launches `child` takes child's address (an address relocation naming the kernel
// symbol, addend 0) before it calls the device runtime's launch entry (a call relocation naming
// __cudaCDP2LaunchDeviceV2 at the call instruction's offset). The call instruction is what the
// collector's call patch reports (its PC), so a launch call names its child kernel exactly.
//
// Where a cubin has line information (nvcc -lineinfo or -G: the DWARF line table in .debug_line,
// one sequence per function), each launch call also gets the source file and line it was written
// on: the last row at or before the call that is not inside the device runtime's inlined
// wrappers (cudaGetParameterBufferV2 / cudaLaunchDeviceV2 from cuda_device_runtime_api.h).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cdpkit::children {

/// A function of the cubin's symbol table (STT_FUNC).
struct cubin_function {
  std::string name;     ///< the symbol (mangled)
  std::uint64_t size = 0;
  bool kernel = false;  ///< a __global__ function (the symbol's STO_CUDA_ENTRY flag)
};

/// One call of the device runtime's launch entry in a function's code.
struct cubin_launch {
  std::string caller;      ///< the function whose code makes the call
  std::uint64_t offset = 0;  ///< the call instruction's offset in that function
  std::string child;       ///< the kernel whose address was taken last before it; empty: none
  std::string file;        ///< the source file of the call (the cubin's line table); empty: no line information
  std::uint32_t line = 0;  ///< its line there (the user's line, not the device runtime's inlined wrapper)
};

/// What read_cubin found.
struct cubin_info {
  std::vector<cubin_function> functions;
  std::vector<cubin_launch> launches;  ///< by caller, then offset
  std::string problem;                 ///< why the image could not be read (whole or in part); empty: read
};

/// True for the device runtime's launch entry points (`__cudaCDP2LaunchDeviceV2` and its
/// siblings: every function whose name holds "LaunchDevice").
bool is_launch_entry(const std::string& function_name);

/// Read `size` bytes of a 64-bit ELF cubin at `image`. Bounds-checked throughout: a truncated or
/// corrupt image gives what could be read and `problem` says what could not.
cubin_info read_cubin(const void* image, std::size_t size);

}  // namespace cdpkit::children
