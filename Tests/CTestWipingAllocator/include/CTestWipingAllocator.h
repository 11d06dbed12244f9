#ifndef CTESTWIPINGALLOCATOR_H
#define CTESTWIPINGALLOCATOR_H
/// 1: the test process installed the wiping allocator at load time (see install.c).
int mtls_tests_wiping_allocator_linked(void);
#endif
