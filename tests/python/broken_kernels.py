"""A module of kernels that cannot be imported: the sweep file that names it is refused at once."""
import kernelsweep as ks

ks.kernel("broken", parameters=[ks.integer("n", 1, "n")])
raise RuntimeError("broken_kernels cannot be set up on this machine")
