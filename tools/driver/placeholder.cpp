// placeholder until the driver lands
namespace gxc {}
