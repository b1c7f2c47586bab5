namespace gxc {}
