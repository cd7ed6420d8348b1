#pragma once
// Which CUDA device a thread's work runs on. A batch on several GPUs runs
// one GPU thread (and one thread before it) a device; every CUDA call made
// on such a thread, the variants' runs, the codecs' and the buffers each
// thread keeps (thread_local), goes to that thread's device. A thread
// outside any scope uses the process's default device: the first of those
// the run chose (set_default_device), else the first the probe found.
//
// A thread keeps one device for its life once it has done CUDA work: its
// thread_local buffers, plans and codec handles belong to that device.
// The scopes are for threads made to run on one device (the pipeline's, a
// device's warm-up), not for switching a thread between devices.
namespace cudaconv {

// The device's index as CUDA numbers it (cudaSetDevice's), for the
// calling thread while the scope lives; the thread's previous choice
// afterwards.
class DeviceScope {
public:
    explicit DeviceScope(int device);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    int previous_;
};

// The calling thread's device for the rest of its life (or until a scope
// says otherwise): for a thread made to run on one device, such as a
// batch's GPU thread for that device.
void set_thread_device(int device);

// The calling thread's device: its scope's, else the default; -1 where
// neither is set (the first device the probe found is then meant).
int thread_device();

// The device of threads outside any scope (-1: the first found). Set
// before the threads that use it start.
void set_default_device(int device);

}  // namespace cudaconv
