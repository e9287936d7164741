/* The release version, bumped by hand at each release. */
#define TPUCTL_VERSION "0.1.0"
