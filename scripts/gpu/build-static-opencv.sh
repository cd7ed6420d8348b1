#!/usr/bin/env bash
# Builds OpenCV 4.6 (core, imgproc, imgcodecs with JPEG and PNG) from
# Debian's source package as static libraries in .deps/opencv-static, so the
# binaries carried to the GPU machine need no OpenCV shared libraries (that
# machine has none, and nothing can be installed there; see GPU.md).
# About 4 minutes on 2 cores; does nothing when already built.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD/.deps
prefix=$root/opencv-static
[[ -f $prefix/lib/libopencv_core.a ]] && exit 0

sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
  dpkg-dev libjpeg62-turbo-dev libpng-dev zlib1g-dev ninja-build cmake g++ >/dev/null

# A private deb-src list made from the system's own Debian source entries,
# so the system's apt configuration is left as it is.
work=$root/opencv-source
mkdir -p "$work/apt/lists/partial"
sed -E 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$work/apt/debian-src.sources"
apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/apt"
          -o "Dir::State::Lists=$work/apt/lists")
apt-get "${apt_opts[@]}" update -qq
if [[ ! -d $work/src ]]; then
  (cd "$work" && apt-get "${apt_opts[@]}" source --download-only opencv >/dev/null &&
     dpkg-source --no-check -x opencv_*.dsc src >/dev/null)
fi

# Static codecs too: the GPU machine's distribution has other sonames.
static_lib() { dpkg -L "$1" | grep -m1 "/$2\$"; }
jpeg_a=$(static_lib libjpeg62-turbo-dev libjpeg.a)
png_a=$(static_lib libpng-dev libpng16.a)
zlib_a=$(static_lib zlib1g-dev libz.a)

cmake -G Ninja -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DBUILD_LIST=core,imgproc,imgcodecs -DWITH_QUIRC=OFF -DWITH_ADE=OFF -DWITH_VTK=OFF \
  -DWITH_VA=OFF -DWITH_TIFF=OFF -DWITH_WEBP=OFF -DWITH_OPENJPEG=OFF -DWITH_JASPER=OFF \
  -DWITH_OPENEXR=OFF -DWITH_GDAL=OFF -DWITH_GDCM=OFF -DWITH_IPP=OFF -DWITH_ITT=OFF \
  -DWITH_OPENCL=OFF -DWITH_EIGEN=OFF -DWITH_LAPACK=OFF -DWITH_TBB=OFF -DWITH_OPENMP=OFF \
  -DWITH_CUDA=OFF -DWITH_QT=OFF -DWITH_GTK=OFF -DWITH_FFMPEG=OFF -DWITH_GSTREAMER=OFF \
  -DWITH_V4L=OFF -DWITH_1394=OFF -DWITH_PROTOBUF=OFF -DBUILD_TESTS=OFF \
  -DBUILD_PERF_TESTS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_opencv_apps=OFF -DBUILD_JAVA=OFF \
  -DBUILD_opencv_python3=OFF -DJPEG_LIBRARY="$jpeg_a" -DPNG_LIBRARY="$png_a" \
  -DPNG_LIBRARY_RELEASE="$png_a" -DZLIB_LIBRARY="$zlib_a" -DZLIB_LIBRARY_RELEASE="$zlib_a" \
  -DCMAKE_INSTALL_PREFIX="$prefix" >"$work/configure.log"
cmake --build "$work/build" >"$work/build.log"
cmake --install "$work/build" >/dev/null
echo "build-static-opencv: installed in $prefix"
