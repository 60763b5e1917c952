#include <iostream>

#include <lazyfuse/lazyfuse.h>

int main() {
  lf::Tensor x = lf::arange(0, 6).reshape({2, 3});
  std::cout << lf::softmax(x * 0.5, -1) << "\n";
}
