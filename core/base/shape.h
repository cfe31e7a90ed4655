// Tensor shapes: a vector of int64 dimensions that holds up to four of them in place.
//
// Shapes are copied everywhere (value types, tensors, kernel views, shape rules), and nearly all
// have rank 0 to 4, so a std::vector was one heap allocation per copy. Shape keeps the part of
// std::vector's interface the project uses; a rank above kInline moves to the heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <vector>

namespace flatcheck {

class Shape {
 public:
  static constexpr size_t kInline = 4;
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;

  Shape() noexcept = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  // `n` dimensions of size `v` (std::vector's count constructor).
  explicit Shape(size_t n, int64_t v = 0) {
    grow(n);
    std::fill(data(), data() + n, v);
    size_ = n;
  }
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
  Shape(It first, It last) {
    assign(first, last);
  }
  // Implicit, as a shape is often built from an int list argument (reshape, transpose).
  Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }

  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { take(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) {
      size_ = 0;
      assign(o.begin(), o.end());
    }
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~Shape() { release(); }

  explicit operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  int64_t* data() { return cap_ > kInline ? heap_ : in_; }
  const int64_t* data() const { return cap_ > kInline ? heap_ : in_; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }

  int64_t& operator[](size_t i) { return data()[i]; }
  const int64_t& operator[](size_t i) const { return data()[i]; }
  int64_t& at(size_t i) {
    check_index(i);
    return data()[i];
  }
  const int64_t& at(size_t i) const {
    check_index(i);
    return data()[i];
  }
  int64_t& back() { return data()[size_ - 1]; }
  const int64_t& back() const { return data()[size_ - 1]; }

  void clear() { size_ = 0; }
  void reserve(size_t n) { grow(n); }
  void resize(size_t n, int64_t v = 0) {
    grow(n);
    if (n > size_) std::fill(data() + size_, data() + n, v);
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == cap_) grow(size_ * 2);
    data()[size_++] = v;
  }
  iterator insert(const_iterator pos, int64_t v) {
    size_t at = static_cast<size_t>(pos - begin());
    push_back(v);
    std::rotate(begin() + at, end() - 1, end());
    return begin() + at;
  }
  iterator erase(const_iterator pos) {
    size_t at = static_cast<size_t>(pos - begin());
    std::copy(begin() + at + 1, end(), begin() + at);
    --size_;
    return begin() + at;
  }
  template <class It>
  void assign(It first, It last) {
    size_t n = static_cast<size_t>(std::distance(first, last));
    size_ = 0;
    grow(n);
    std::copy(first, last, data());
    size_ = n;
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  // Makes room for `n` dimensions, keeping the first size_.
  void grow(size_t n) {
    if (n <= cap_) return;
    size_t cap = std::max(n, cap_ * 2);
    int64_t* p = new int64_t[cap];
    std::copy(begin(), end(), p);
    release();
    heap_ = p;
    cap_ = cap;
  }
  void release() {
    if (cap_ > kInline) delete[] heap_;
    cap_ = kInline;
  }
  // Takes o's dimensions and leaves o empty and inline.
  void take(Shape& o) noexcept {
    size_ = o.size_;
    if (o.cap_ > kInline) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.cap_ = kInline;
    } else {
      std::copy(o.in_, o.in_ + o.size_, in_);
      cap_ = kInline;
    }
    o.size_ = 0;
  }
  void check_index(size_t i) const;

  union {
    int64_t in_[kInline];
    int64_t* heap_;
  };
  size_t size_ = 0;
  size_t cap_ = kInline;
};

}  // namespace flatcheck
