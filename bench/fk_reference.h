/* The hand-unrolled forward kinematics of the Franka Panda arm (data/robots/franka_panda,
 * panda_link0 to panda_link8): the straight-line code a person writes for that one chain,
 * the floor `marionette bench fk` and the KDL peer compare the library's chain FK with. */
#ifndef MN_BENCH_FK_REFERENCE_H
#define MN_BENCH_FK_REFERENCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Tip frame of panda_link8 in panda_link0's frame for the 7 joint angles q: R row-major, p.
 * sincos is the sine-cosine used (the library's mn_sincos, or libm's). */
void mn_bench_panda_fk(const double q[7], double R[9], double p[3],
                       void (*sincos_fn)(double, double*, double*));
/* The same with the library's mn_sincos and with libm's sin and cos, each called directly
 * (no function pointer). */
void mn_bench_panda_fk_mn(const double q[7], double R[9], double p[3]);
void mn_bench_panda_fk_libm(const double q[7], double R[9], double p[3]);

#ifdef __cplusplus
}
#endif
#endif
